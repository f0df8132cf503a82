// Package ratelimit is the provider quota shared by the whole cluster: one
// token bucket per provider key (requests/min and tokens/min) kept in
// Postgres, taken from by every writer process of every run that uses that key.
//
// # One atomic statement
//
// A take is a single UPDATE ... RETURNING on the bucket row (wrapped in a CTE
// that inserts the reservation row when the take succeeds). The refill is
// computed inside that statement from clock_timestamp() and the row's own
// updated_at, by the SQL functions ratelimit_refill and ratelimit_take_step
// (migration 0020_ratelimit.sql), which read no table and only transform the
// row being updated. Why this and not the alternatives:
//
//   - A read-modify-write in Go (SELECT, decide, UPDATE) needs SELECT ... FOR
//     UPDATE and three round trips per take, and is only correct if every
//     caller remembers the lock. The UPDATE takes the row lock itself.
//   - Under READ COMMITTED, an UPDATE that finds the row changed by a
//     concurrent take waits for it and re-evaluates its SET expressions against
//     the newest row version (EvalPlanQual). Since every input to the decision
//     is a column of that row, concurrent takers are serialised on the row and
//     each decides on the latest levels: two pods can never both spend the same
//     tokens. No SERIALIZABLE retries, no advisory locks.
//   - clock_timestamp() is the database's clock, so pods with skewed clocks
//     still agree on how much has refilled. The Go side has no clock of its
//     own: it only sleeps for the wait the statement computed.
//   - PostgreSQL 15 cannot RETURN the old row, so the decision (ok, wait,
//     tokens held) is written into last_* columns of the row it was taken on
//     and returned from there; the row lock makes them this taker's own.
//
// # Reservations and what a dead writer leaks
//
// A call's tokens are reserved, not spent: a take adds its estimate to the
// bucket's tok_held, and available tokens are level - held. Settle removes the
// hold and spends the actual usage from the level, so an over-estimate (the
// usual case: max_tokens is reserved, far less is written) comes back the
// moment the call ends. That is why reservations must expire: a writer that
// dies between Wait and Settle would otherwise hold its estimate for ever, and
// a few dead pods would starve the cluster. Each reservation row has
// expires_at = take time + ReservationTTL; when a take fails (and in
// Available) the expired rows are deleted and their tokens released from the
// hold. Releasing without charging is safe when ReservationTTL is longer than
// the longest call plus the provider's one-minute window: the hold has then
// counted against us for longer than the provider counted the call. Settling
// a reservation that already expired charges its actual usage and nothing
// else (the hold is gone), so a slow-but-alive writer is still accounted.
// Requests are not held: one request is spent at the take.
//
// # What is guaranteed
//
//   - Rate: over any interval of length T, a bucket admits at most
//     capacity + rate*T requests, where capacity = RPM*Burst/60 (at least 1);
//     likewise for tokens counted at their reservation. Burst defaults to 10
//     seconds, so over a minute the bucket admits at most 7/6 of RPM: set RPM
//     to quota*60/(60+Burst) for a hard per-minute ceiling.
//   - Pause: after a 429 every sharer waits until paused_until, each with its
//     own jitter so they do not return in lockstep.
//   - No starvation: a failed waiter becomes the bucket's head if there is no
//     live head or it has waited longer than the head has; while a head is
//     live others take only what leaves the head's need in the bucket. So the
//     oldest active waiter is served next whatever its size, and a head whose
//     process died stops blocking after its sleep plus a grace. Among waiters
//     that are not the oldest there is no order (FIFO across processes is not
//     promised).
//   - A request larger than the bucket's token capacity holds the whole
//     capacity (it waits for a full bucket) and settles its real usage
//     afterwards; it never waits for ever.
//   - RPM or TPM of 0 means unknown and unlimited in that dimension, until
//     Observe learns a limit from x-ratelimit-limit-* headers. A configured
//     value is never overwritten by headers; the last Limiter created for a
//     key sets the configured values for everyone sharing it.
package ratelimit
