-- The provider quota as providers count it: a log of admissions over the
-- provider's window (see pkg/ratelimit/doc.go). It replaces the token bucket
-- of 0020/0021, whose rows hold nothing worth keeping (a quota's state lives
-- one window).

DROP TABLE IF EXISTS ratelimit_reservations;
DROP TABLE IF EXISTS ratelimit_buckets CASCADE; -- and the functions over its row type

CREATE TABLE IF NOT EXISTS ratelimit_windows (
    key_hash     text PRIMARY KEY,                      -- sha256 of the provider identity; never the key
    window_s     double precision NOT NULL,             -- the provider's quota window
    margin_s     double precision NOT NULL,             -- admissions are forgotten this much after the provider forgets them
    req_limit    double precision NOT NULL DEFAULT 0,   -- requests per window; 0: not known, not limited
    tok_limit    double precision NOT NULL DEFAULT 0,   -- tokens per window; 0: not known, not limited
    req_fixed    boolean NOT NULL DEFAULT false,        -- configured: headers may lower it, never raise it
    tok_fixed    boolean NOT NULL DEFAULT false,
    req_used     double precision NOT NULL DEFAULT 0,   -- sum over live admissions
    tok_used     double precision NOT NULL DEFAULT 0,
    paused_until timestamptz NOT NULL DEFAULT 'epoch',
    -- the waiter everyone else leaves room for (anti-starvation; oldest waiter wins)
    head_ticket  bigint,
    head_tokens  double precision NOT NULL DEFAULT 0,
    head_since   timestamptz,
    head_until   timestamptz
);

-- One admitted request (requests 1), or tokens the provider said it counted
-- that no admission of ours accounts for (requests 0: another client of the
-- key, or a tokenizer counting more than we did). Live rows are the window;
-- dead ones are kept a while to compare with what the provider said of a
-- moment that has passed.
CREATE TABLE IF NOT EXISTS ratelimit_admissions (
    id       bigserial PRIMARY KEY,
    key_hash text NOT NULL REFERENCES ratelimit_windows (key_hash) ON DELETE CASCADE,
    at       timestamptz NOT NULL,
    requests double precision NOT NULL,
    tokens   double precision NOT NULL,
    live     boolean NOT NULL DEFAULT true
);
CREATE INDEX IF NOT EXISTS ratelimit_admissions_at ON ratelimit_admissions (key_hash, at);

-- ratelimit_expire takes out of the window (live = false) what left it at
-- now, subtracts it from the row's sums, and deletes rows long dead. The
-- caller holds the window row's lock.
CREATE OR REPLACE FUNCTION ratelimit_expire(b INOUT ratelimit_windows, now timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    horizon timestamptz := now - make_interval(secs => b.window_s + b.margin_s);
    gone_req double precision;
    gone_tok double precision;
BEGIN
    WITH gone AS (
        UPDATE ratelimit_admissions SET live = false
        WHERE key_hash = b.key_hash AND live AND at <= horizon
        RETURNING requests, tokens
    )
    SELECT coalesce(sum(requests), 0), coalesce(sum(tokens), 0) INTO gone_req, gone_tok FROM gone;
    b.req_used := greatest(0, b.req_used - gone_req);
    b.tok_used := greatest(0, b.tok_used - gone_tok);
    IF b.req_used < 0.5 THEN b.req_used := 0; END IF; -- float dust once the window empties
    DELETE FROM ratelimit_admissions
    WHERE key_hash = b.key_hash AND NOT live AND at <= horizon - make_interval(secs => b.window_s + 60);
END $$;

-- ratelimit_free_at is when enough of the window's live admissions will have
-- left it that need of the dimension ('req' or 'tok') is free again: the
-- expiry of the admission at which the running sum, oldest first, reaches
-- need (the newest one's when nothing short of all of them frees it).
CREATE OR REPLACE FUNCTION ratelimit_free_at(b ratelimit_windows, dim text, need double precision)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT at FROM (
             SELECT at, sum(CASE WHEN dim = 'req' THEN requests ELSE tokens END) OVER (ORDER BY at, id) AS c
             FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live) s
         WHERE c >= need ORDER BY at LIMIT 1),
        (SELECT max(at) FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live),
        clock_timestamp() - make_interval(secs => b.window_s + b.margin_s)
    ) + make_interval(secs => b.window_s + b.margin_s)
$$;

-- ratelimit_freed is how much of the dimension the window's live admissions
-- free, oldest first, by the time need of it has been freed: the running sum
-- at the admission where it reaches need (all of them when none does).
CREATE OR REPLACE FUNCTION ratelimit_freed(b ratelimit_windows, dim text, need double precision)
RETURNS double precision LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN need <= 0 THEN 0 ELSE coalesce(
        (SELECT c FROM (
             SELECT at, id, sum(CASE WHEN dim = 'req' THEN requests ELSE tokens END) OVER (ORDER BY at, id) AS c
             FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live) s
         WHERE c >= need ORDER BY at, id LIMIT 1),
        (SELECT sum(CASE WHEN dim = 'req' THEN requests ELSE tokens END) FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live),
        0) END
$$;

-- ratelimit_admit admits one request of n tokens now, or says how long to
-- wait. It locks the window row first and reads the log in statements after
-- that (a plpgsql function takes a new snapshot per statement under READ
-- COMMITTED), so concurrent admits from every process are serialised and each
-- decides on the whole log. too_large: n alone exceeds the tokens per window.
-- A waiter that fails claims the head when there is none, when the head has
-- gone stale, or when it has waited longer than the head. While a head is
-- live others may admit only what does not delay it: what leaves its need in
-- the window now, or, when it must wait for admissions to expire, what fits
-- now and in the room left over once enough has expired for the head
-- (backfill: a smaller request fills a gap the head cannot use).
CREATE OR REPLACE FUNCTION ratelimit_admit(
    k text, n double precision, ticket bigint, since timestamptz, max_sleep double precision, grace double precision,
    OUT ok boolean, OUT wait double precision, OUT admission bigint, OUT too_large boolean,
    OUT tok_limit double precision, OUT at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    b         ratelimit_windows;
    now       timestamptz;
    head_live boolean;
    mine      boolean;
    res_req   double precision := 0;
    res_tok   double precision := 0;
BEGIN
    SELECT * INTO b FROM ratelimit_windows w WHERE w.key_hash = k FOR UPDATE;
    IF NOT FOUND THEN
        RETURN; -- all NULL: the bucket is gone
    END IF;
    now := clock_timestamp();
    b := ratelimit_expire(b, now);
    at := now;
    ok := false;
    wait := 0;
    too_large := b.tok_limit > 0 AND n > b.tok_limit;
    tok_limit := b.tok_limit;
    IF too_large THEN
        UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used WHERE w.key_hash = k;
        RETURN;
    END IF;
    head_live := b.head_ticket IS NOT NULL AND b.head_until > now;
    mine := b.head_ticket IS NOT DISTINCT FROM ticket;
    IF head_live AND NOT mine THEN
        res_req := 1;
        res_tok := b.head_tokens;
    END IF;
    wait := greatest(0, extract(epoch FROM b.paused_until - now));
    IF b.req_limit > 0 AND b.req_used + 1 + res_req > b.req_limit THEN
        wait := greatest(wait, extract(epoch FROM ratelimit_free_at(b, 'req', b.req_used + 1 + res_req - b.req_limit) - now));
    END IF;
    IF b.tok_limit > 0 AND b.tok_used + n + res_tok > b.tok_limit THEN
        wait := greatest(wait, extract(epoch FROM ratelimit_free_at(b, 'tok', b.tok_used + n + res_tok - b.tok_limit) - now));
    END IF;
    IF wait > 0 AND head_live AND NOT mine AND b.paused_until <= now
       AND (b.req_limit <= 0 OR (b.req_used + 1 <= b.req_limit
            AND 1 <= (b.req_limit - b.req_used) + ratelimit_freed(b, 'req', 1 - (b.req_limit - b.req_used)) - 1))
       AND (b.tok_limit <= 0 OR (b.tok_used + n <= b.tok_limit
            AND n <= (b.tok_limit - b.tok_used) + ratelimit_freed(b, 'tok', b.head_tokens - (b.tok_limit - b.tok_used)) - b.head_tokens)) THEN
        wait := 0; -- backfill
    END IF;
    IF wait <= 0 THEN
        INSERT INTO ratelimit_admissions (key_hash, at, requests, tokens) VALUES (k, now, 1, n) RETURNING id INTO admission;
        b.req_used := b.req_used + 1;
        b.tok_used := b.tok_used + n;
        IF mine THEN
            b.head_ticket := NULL;
            b.head_tokens := 0;
            b.head_since := NULL;
            b.head_until := NULL;
        END IF;
        ok := true;
        wait := 0;
    ELSIF NOT head_live OR mine OR since < b.head_since THEN
        b.head_ticket := ticket;
        b.head_tokens := n;
        b.head_since := since;
        -- the head sleeps at most max_sleep before it asks again; a head that
        -- does not come back within grace of that is presumed dead
        b.head_until := now + make_interval(secs => least(wait, max_sleep) + grace);
    END IF;
    UPDATE ratelimit_windows w SET
        req_used = b.req_used, tok_used = b.tok_used,
        head_ticket = b.head_ticket, head_tokens = b.head_tokens, head_since = b.head_since, head_until = b.head_until
    WHERE w.key_hash = k;
END $$;

-- ratelimit_settle replaces admission id's charge with what the provider
-- counted (n tokens), then reads what the provider said of its quota: a
-- limit it names is learnt (and lowers a configured one), and remaining
-- budget below what our log leaves at the moment the provider admitted the
-- request is recorded as tokens or requests someone else spent.
CREATE OR REPLACE FUNCTION ratelimit_settle(
    k text, id_ bigint, n double precision,
    have_req boolean, lim_req double precision, rem_req double precision,
    have_tok boolean, lim_tok double precision, rem_tok double precision, slack double precision)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    b       ratelimit_windows;
    now     timestamptz;
    old     double precision;
    adm_at  timestamptz;
    is_live boolean;
    seen_req double precision;
    seen_tok double precision;
    extra   double precision;
BEGIN
    SELECT * INTO b FROM ratelimit_windows w WHERE w.key_hash = k FOR UPDATE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    now := clock_timestamp();
    b := ratelimit_expire(b, now);
    SELECT a.tokens, a.at, a.live INTO old, adm_at, is_live FROM ratelimit_admissions a WHERE a.id = id_ AND a.key_hash = k;
    IF FOUND THEN
        UPDATE ratelimit_admissions a SET tokens = n WHERE a.id = id_;
        IF is_live THEN
            b.tok_used := greatest(0, b.tok_used + n - old);
        END IF;
    ELSE
        adm_at := now;
    END IF;
    IF have_req AND lim_req > 0 THEN
        b.req_limit := CASE WHEN b.req_fixed THEN least(b.req_limit, lim_req) ELSE lim_req END;
    END IF;
    IF have_tok AND lim_tok > 0 THEN
        b.tok_limit := CASE WHEN b.tok_fixed THEN least(b.tok_limit, lim_tok) ELSE lim_tok END;
    END IF;
    -- What the provider's window held when it admitted this request, by our
    -- log: admissions in the window before it, and those a little after
    -- (another process's request may have reached it first).
    SELECT coalesce(sum(a.requests), 0), coalesce(sum(a.tokens), 0) INTO seen_req, seen_tok
    FROM ratelimit_admissions a
    WHERE a.key_hash = k AND a.at > adm_at - make_interval(secs => b.window_s) AND a.at <= adm_at + make_interval(secs => slack);
    IF have_req AND b.req_limit > 0 THEN
        extra := (b.req_limit - seen_req) - rem_req;
        IF extra >= 1 THEN
            INSERT INTO ratelimit_admissions (key_hash, at, requests, tokens) VALUES (k, now, extra, 0);
            b.req_used := b.req_used + extra;
        END IF;
    END IF;
    IF have_tok AND b.tok_limit > 0 THEN
        extra := (b.tok_limit - seen_tok) - rem_tok;
        IF extra > greatest(1, b.tok_limit / 100) THEN
            INSERT INTO ratelimit_admissions (key_hash, at, requests, tokens) VALUES (k, now, 0, extra);
            b.tok_used := b.tok_used + extra;
        END IF;
    END IF;
    UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used, req_limit = b.req_limit, tok_limit = b.tok_limit
    WHERE w.key_hash = k;
    RETURN true;
END $$;

-- ratelimit_refresh is the window row with what left the window taken out
-- (NULL when there is no such row).
CREATE OR REPLACE FUNCTION ratelimit_refresh(k text) RETURNS ratelimit_windows
LANGUAGE plpgsql AS $$
DECLARE
    b ratelimit_windows;
BEGIN
    SELECT * INTO b FROM ratelimit_windows w WHERE w.key_hash = k FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    b := ratelimit_expire(b, clock_timestamp());
    UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used WHERE w.key_hash = k;
    RETURN b;
END $$;
