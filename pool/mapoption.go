package pool

// MapOption configures Map and MapOrdered.
type MapOption func(*mapConfig)

type mapConfig struct {
	failFast bool
	window   int
	stopErr  *error
}

// FailFast makes Map stop at the first item whose fn returns an error (or
// panics). The failure is published before anything is canceled, so the
// consumer receives it before any result that the cancellation causes:
// the first error it sees is the real one, never a sibling's
// context.Canceled. Pulling stops at once, and items pulled but not yet
// started yield [ErrNotStarted].
//
// Map then cancels the context of the running items, with a cause (see
// [context.Cause]) wrapping [ErrFailFast] and the failure. MapOrdered
// cancels only the items after the failed one, and only when the consumer
// reaches the failed item in input order: the items before it run
// undisturbed, as the consumer waits for them anyway, and their Results
// are their own. Every item already pulled still yields its Result.
func FailFast() MapOption { return func(c *mapConfig) { c.failFast = true } }

// Window fixes the maximum number of items pulled from the input and not yet
// delivered to the consumer (and thus MapOrdered's reorder window) at n,
// instead of following the pool's size + PullSlack. Values below 1 mean 1.
// A window smaller than the pool leaves workers to other users; a larger one
// lets MapOrdered keep workers busy behind a slow head item, at the cost of
// holding more finished results.
func Window(n int) MapOption { return func(c *mapConfig) { c.window = max(n, 1) } }

// StopErr makes Map and MapOrdered report why they ended: each time
// their iterator returns, it stores in *dst
//
//   - nil if the Map ran to completion: the input was exhausted, every
//     result was delivered and the Map's context was still live when the
//     iterator returned (a context canceled in the loop body, even on the
//     last result, counts as canceled), or the consumer broke out of its
//     loop, which it knows;
//   - otherwise the cause (see [context.Cause]) of the Map's context,
//     which was done before that: ctx's cause (context.Canceled,
//     context.DeadlineExceeded or the cause given to its cancel function),
//     an error wrapping [ErrFailFast] and the first failure when
//     [FailFast] stopped it, or an error wrapping [ErrClosed] when a Close
//     deadline canceled it;
//   - [ErrClosed] if the pool was closed before the input was exhausted;
//   - [ErrNilTask] if p, in or fn is nil.
//
// So a caller can tell a Map cut short (by a canceled context before it
// started, say, which yields no results at all) from one whose input was
// exhausted, without checking ctx itself. A nil dst is ignored.
func StopErr(dst *error) MapOption { return func(c *mapConfig) { c.stopErr = dst } }
