// Package ratelimit is the provider quota shared by the whole cluster: one
// quota per provider key (requests and tokens per window), kept in Postgres
// and admitted from by every writer process of every run that uses the key,
// counted the way OpenAI-compatible providers count it, so that it never
// causes a 429 at any quota size.
//
// # What providers count, and what is kept
//
// A provider admits a request when what it admitted in the last window (one
// minute), plus this request, fits the quota, and counts the request at
// admission as its prompt (estimated) plus its reply allowance (max_tokens or
// max_completion_tokens), whatever is written. The quota is kept the same
// way: a log of admissions (ratelimit_admissions) over a row per key
// (ratelimit_windows) holding the limits per window and the sums over the
// live log. A request is admitted for the caller's estimate of that count;
// Settle then replaces the charge with what the provider counted (the prompt
// it reported plus the allowance), so an estimate that was off costs nothing
// after the call. No token bucket is involved: a bucket admits its capacity
// plus a window's refill in one window, and either wastes quota (when
// derated) or overruns the provider's window (when not), and a request larger
// than its capacity cannot be admitted honestly at all.
//
// # Counted from the write
//
// The provider counts a request from when it arrives, and connection setup
// (a dial, a TLS handshake, a pool that must open a connection) can lie
// between our admission and the write. So an admission is stamped again when
// its request is written (Sent, which the provider client calls from
// net/http/httptrace's WroteRequest) and counts from that moment: the
// limiter's window is then the provider's, however long the request took to
// leave. Until it is stamped (or settled), an admission may still be written
// at any moment, so it is held a window longer than a written one; one
// written after it left even that is counted again when it is. A request
// that never left costs no tokens once settled.
//
// Written admissions expire Margin after the provider's window, which covers
// the time between our write and the provider's count (the network, and the
// stamp's own round trip, which makes the stamp later than the write, never
// earlier). Since each admission is counted for a bounded time whatever
// happens to the process that made it, a writer that dies mid-call leaks
// nothing: there are no reservations to expire.
//
// Against a provider that counts a sliding window this is exact (bar the
// margin); against one that refills a bucket of a window's quota
// continuously (what OpenAI's headers describe) it is conservative, since any
// sequence that fits every window also fits such a bucket.
//
// # One transaction per decision
//
// ratelimit_admit (migrations 0042_ratelimit_window.sql, 0045_ratelimit_sent.sql) locks the key's row
// first and reads the log in later statements: a plpgsql function takes a new
// snapshot per statement under READ COMMITTED, so each admit sees every admit
// committed before it took the lock, and concurrent admits from every process
// are serialised on the row. clock_timestamp() is the database's clock, so
// processes with skewed clocks still agree on what has left the window; the
// Go side only sleeps for the wait the function computed (when enough of the
// log will have expired).
//
// # What the provider says
//
// Every answer's x-ratelimit-* headers reach Settle. A limit the provider
// names is learnt when none was configured, and lowers a configured one (a
// key shared with other tools may be given less than the account's quota).
// Remaining budget lower than what the log leaves at the moment the provider
// admitted the request is another client of the key (or a tokenizer counting
// more than the estimate): the difference is logged as an admission of ours,
// and forgotten with the window. A 429 (which a correct quota does not
// cause, but another client of the key can) pauses every sharer until the
// provider's Retry-After.
//
// # What is guaranteed
//
//   - Over any stretch of Window by the database's clock, admissions hold at
//     most the limit of requests and of tokens (as settled), each counted
//     from its write, even across processes.
//   - A request larger than the tokens per window is refused at once with a
//     *model.ConfigError (model.KindQuotaTooSmall): it would never be admitted.
//   - No starvation: a failed waiter becomes the head if there is no live
//     head or it has waited longer than the head has; while a head is live
//     others admit only what leaves the head's need in the window. The oldest
//     active waiter is served next whatever its size, and a head whose
//     process died stops blocking after its sleep plus a grace.
//   - RPM or TPM of 0 means unknown and unlimited in that dimension, until a
//     provider's x-ratelimit-limit-* header names it. The last Limiter created
//     for a key sets the configured limits for everyone sharing it.
package ratelimit
