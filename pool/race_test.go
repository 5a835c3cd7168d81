//go:build race

package pool_test

// raceDetector is set when the tests run under the race detector, which
// makes a trivial task take longer than the pool's short-task mark.
const raceDetector = true
