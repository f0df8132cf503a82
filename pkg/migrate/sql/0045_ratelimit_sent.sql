-- A provider counts a request in its window from when the request reaches
-- it, not from when our limiter admitted it: connection setup can lie
-- between the two. An admission is therefore stamped again when its request
-- is written (ratelimit_sent), and counts from then (see pkg/ratelimit/doc.go).
--
-- sent: the admission's at is the moment its request was written (or the
-- call is over: Settle). Rows that are not admissions of ours (requests 0,
-- tokens the provider counted that we did not) are sent by nature. An
-- admission not yet sent may still be written at any moment, so it is held a
-- whole window longer than a sent one: a request that takes longer than that
-- to be written is revived when it is (and a process that died between
-- admission and write holds its admission two windows at most).

ALTER TABLE ratelimit_admissions ADD COLUMN IF NOT EXISTS sent boolean NOT NULL DEFAULT true;
ALTER TABLE ratelimit_admissions ALTER COLUMN sent SET DEFAULT false;

-- ratelimit_expiry is when an admission leaves the window.
CREATE OR REPLACE FUNCTION ratelimit_expiry(b ratelimit_windows, at timestamptz, sent boolean)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT at + make_interval(secs => b.window_s + b.margin_s + CASE WHEN sent THEN 0 ELSE b.window_s END)
$$;

CREATE OR REPLACE FUNCTION ratelimit_expire(b INOUT ratelimit_windows, now timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    horizon timestamptz := now - make_interval(secs => b.window_s + b.margin_s);
    gone_req double precision;
    gone_tok double precision;
BEGIN
    WITH gone AS (
        UPDATE ratelimit_admissions a SET live = false
        WHERE a.key_hash = b.key_hash AND a.live AND a.at <= horizon
          AND ratelimit_expiry(b, a.at, a.sent) <= now
        RETURNING a.requests, a.tokens
    )
    SELECT coalesce(sum(requests), 0), coalesce(sum(tokens), 0) INTO gone_req, gone_tok FROM gone;
    b.req_used := greatest(0, b.req_used - gone_req);
    b.tok_used := greatest(0, b.tok_used - gone_tok);
    IF b.req_used < 0.5 THEN b.req_used := 0; END IF; -- float dust once the window empties
    DELETE FROM ratelimit_admissions a
    WHERE a.key_hash = b.key_hash AND NOT a.live AND a.at <= horizon - make_interval(secs => 2 * b.window_s + 60);
END $$;

-- ratelimit_free_at and ratelimit_freed as in 0042, ordered by when each
-- live admission leaves the window (an unsent one a window later).
CREATE OR REPLACE FUNCTION ratelimit_free_at(b ratelimit_windows, dim text, need double precision)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT exp FROM (
             SELECT exp, sum(v) OVER (ORDER BY exp, id) AS c
             FROM (SELECT id, ratelimit_expiry(b, at, sent) AS exp, CASE WHEN dim = 'req' THEN requests ELSE tokens END AS v
                   FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live) l) s
         WHERE c >= need ORDER BY exp LIMIT 1),
        (SELECT max(ratelimit_expiry(b, at, sent)) FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live),
        clock_timestamp()
    )
$$;

CREATE OR REPLACE FUNCTION ratelimit_freed(b ratelimit_windows, dim text, need double precision)
RETURNS double precision LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN need <= 0 THEN 0 ELSE coalesce(
        (SELECT c FROM (
             SELECT exp, id, sum(v) OVER (ORDER BY exp, id) AS c
             FROM (SELECT id, ratelimit_expiry(b, at, sent) AS exp, CASE WHEN dim = 'req' THEN requests ELSE tokens END AS v
                   FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live) l) s
         WHERE c >= need ORDER BY exp, id LIMIT 1),
        (SELECT sum(CASE WHEN dim = 'req' THEN requests ELSE tokens END) FROM ratelimit_admissions WHERE key_hash = b.key_hash AND live),
        0) END
$$;

-- ratelimit_sent stamps admission id_ with the moment its request was
-- written: from then on the provider counts it, so from then on it counts.
-- An admission that had already left the window (its request took longer
-- than that to be written) is counted again. False when the admission is
-- unknown (long gone) or the window row is.
CREATE OR REPLACE FUNCTION ratelimit_sent(k text, id_ bigint, OUT ok boolean, OUT at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    b        ratelimit_windows;
    now      timestamptz;
    was_live boolean;
    was_sent boolean;
    req      double precision;
    tok      double precision;
BEGIN
    ok := false;
    SELECT * INTO b FROM ratelimit_windows w WHERE w.key_hash = k FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    now := clock_timestamp();
    b := ratelimit_expire(b, now);
    SELECT a.live, a.sent, a.requests, a.tokens, a.at INTO was_live, was_sent, req, tok, at
    FROM ratelimit_admissions a WHERE a.id = id_ AND a.key_hash = k;
    IF NOT FOUND THEN
        UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used WHERE w.key_hash = k;
        RETURN;
    END IF;
    ok := true;
    IF NOT was_sent THEN
        at := now;
        UPDATE ratelimit_admissions a SET at = now, sent = true, live = true WHERE a.id = id_;
        IF NOT was_live THEN
            b.req_used := b.req_used + req;
            b.tok_used := b.tok_used + tok;
        END IF;
    END IF;
    UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used WHERE w.key_hash = k;
END $$;

-- ratelimit_settle as in 0042, and the call is over: an admission never
-- stamped as sent counts from its admission, as a sent one does. What the
-- provider said someone else spent is recorded as sent.
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
        UPDATE ratelimit_admissions a SET tokens = n, sent = true WHERE a.id = id_;
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
            INSERT INTO ratelimit_admissions (key_hash, at, requests, tokens, sent) VALUES (k, now, extra, 0, true);
            b.req_used := b.req_used + extra;
        END IF;
    END IF;
    IF have_tok AND b.tok_limit > 0 THEN
        extra := (b.tok_limit - seen_tok) - rem_tok;
        IF extra > greatest(1, b.tok_limit / 100) THEN
            INSERT INTO ratelimit_admissions (key_hash, at, requests, tokens, sent) VALUES (k, now, 0, extra, true);
            b.tok_used := b.tok_used + extra;
        END IF;
    END IF;
    UPDATE ratelimit_windows w SET req_used = b.req_used, tok_used = b.tok_used, req_limit = b.req_limit, tok_limit = b.tok_limit
    WHERE w.key_hash = k;
    RETURN true;
END $$;
