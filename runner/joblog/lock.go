package joblog

import "errors"

// ErrLocked is wrapped by the error Open returns when another Writer, in
// this process or another, holds the joblog. Two runs writing one joblog
// would truncate each other's lines and write the same job numbers.
var ErrLocked = errors.New("another run is writing this joblog")
