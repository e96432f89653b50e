// Package retry retries requests to Google Cloud Storage the way Google specifies, and offers
// the other well-known backoff policies for comparison or for other servers.
//
// Every request gcsput makes goes through a [Runner]: it calls the operation, asks a
// classifier ([IsRetryable]) whether a failure is worth another try, asks a [Policy] how long
// to wait, honours the server's Retry-After, and gives up when the attempt count, the
// deadline, the policy's own rule or the caller's context says so, with an [*Error] that
// keeps every cause.
//
// # Policies
//
// A policy is a small value type whose Wait method is a pure function of a [Step]: the retry
// number n, the previous wait, the time elapsed and one random number in [0, 1). Tests pass
// the random number, so every table in the seeds is checked exactly. The zero value of each
// type is its documented default; [Parse] builds one from the text a --retry flag gives.
//
//	spec           type            wait before retry n                        n of the 1st retry  stops
//	gcs (default)  GCS             min(2^n s + U{0..1000} ms, 32 s)           0 (1–2 s)           no (Runner's budget)
//	java           Java            min(0.5 s·1.5^n, 60 s) · U[0.5, 1.5)       0 (0.25–0.75 s)     elapsed > 15 min
//	drive          Drive           2^n s + U{0..1000} ms                      0 (1–2 s)           after 5 retries
//	simpledb       SimpleDB        U[0, 1) · 100 ms · 4^n                     1 ([0, 400 ms))     no
//	csma           CSMA            k · slot, k ∈ {0 … 2^min(n,10) − 1}        1 (k ∈ {0, 1})      after 16 attempts
//	exponential    Exponential     expo(n) = min(cap, base · 2^n)             0 (base)            no
//	full           FullJitter      U[0, expo(n))                              0                   no
//	equal          EqualJitter     expo(n)/2 + U[0, expo(n)/2)                0                   no
//	decorrelated   Decorrelated    min(cap, U[base, 3 · prev)), prev₀ = base  —                   no
//	constant       Constant        wait                                       —                   no
//
// U{0..1000} ms is Google's random_number_milliseconds: a whole number of milliseconds, both
// ends included, drawn anew for every retry. The types are [GCS], [Java], [Drive], [SimpleDB],
// [CSMA], [Exponential], [FullJitter], [EqualJitter], [Decorrelated] and [Constant]. Every
// parameter can be set (fields of the type, keys of the spec), and every policy but Java's
// can also stop after a number of retries (Java stops on time). The AWS family's defaults are
// base 1 s and cap 32 s, GCS's scale; CSMA/CD's slot defaults to 100 ms.
//
// # Choosing a policy
//
// Use the default for Cloud Storage: it is what Google asks of every client, and its first
// wait of at least a second gives a throttled bucket real relief. Against a contended
// resource of your own, full jitter does the least work and decorrelated jitter finishes
// soonest; equal jitter is slower than both, and exponential backoff without jitter keeps
// every client in step, which is the problem it was meant to solve. The package's tests replay
// the AWS blog's experiment to show this (see the table in docs/retries.md).
//
// # Budgets
//
// A zero [Runner] allows 12 attempts (the first included; [DefaultMaxAttempts]) or, when the
// policy has its own stop rule ([Limiter]: Drive, CSMA/CD, Java, or any policy with a retry
// limit set), that rule instead; and 10 minutes from the first attempt ([DefaultDeadline]).
// A wait that would end past the deadline is not started. With GCS's default 32 s cap the
// 11 waits between 12 attempts add up to at most 2+3+5+9+17+6·32 = 228 s.
//
// A transfer that makes progress should not run out of retries because it is long: build the
// loop on [Runner.Begin] and call [Attempts.Reset] whenever the server acknowledges progress,
// as gsutil and gcloud do. The count, n and the deadline then restart, so a 10 GiB upload
// over a flaky link is bounded by "12 attempts without progress" and "10 minutes without
// progress", not by a total.
//
// # Errors
//
// [IsRetryable] retries HTTP 408, 429 and 5xx (*googleapi.Error) and transport failures
// (connection refused or reset, unexpected EOF, timeouts); never other 4xx, the caller's
// context.Canceled or context.DeadlineExceeded, or an error marked [Permanent]. Replace it in
// [Runner.Retryable] for a caller's own rule. A non-retryable error is returned as it is; when
// the budget runs out the result is an [*Error], "gave up after 5 attempts in 31.2s: …",
// whose Unwrap gives both the last cause and the context error, so errors.As finds the
// *googleapi.Error and errors.Is finds context.DeadlineExceeded.
//
// # Retry-After
//
// A Retry-After header on a *googleapi.Error (seconds or an HTTP date; [ParseRetryAfter]) is a
// floor under the policy's next wait, capped by [Runner.MaxRetryAfter] (5 minutes by default)
// and never past the deadline: if the server asks for more time than is left, the runner gives
// up at once instead of sleeping.
//
// # Many workers, one bucket
//
// A Runner decides how long each refused request waits, and only that request waits: a 429
// never puts the other workers to sleep. How many requests go to a throttled bucket at once
// is adapted by the caller (package upload keeps one window per bucket, cut on 429 and 503
// and widened on success, as TCP does).
//
// # Testing
//
// Time and randomness are fields, not globals: [Runner.Clock] and [Runner.Rand]. The
// retrytest package has a fake Clock whose Sleep advances its Now and records the wait, and
// fixed or seeded random sources, so tests of code that retries are exact and never sleep.
package retry
