-- The provider rate limiter: one token bucket per provider key, shared by every
-- writer of every run. See pkg/ratelimit/doc.go for why it is shaped this way.

CREATE TABLE IF NOT EXISTS ratelimit_buckets (
    key_hash     text PRIMARY KEY,                      -- sha256 of the provider identity; never the key
    rpm          double precision NOT NULL DEFAULT 0,   -- requests per minute; 0: not known, not limited
    tpm          double precision NOT NULL DEFAULT 0,   -- tokens per minute; 0: not known, not limited
    rpm_fixed    boolean NOT NULL DEFAULT false,        -- configured, so headers do not relearn it
    tpm_fixed    boolean NOT NULL DEFAULT false,
    burst        double precision NOT NULL,             -- seconds of quota the bucket holds
    req_level    double precision NOT NULL DEFAULT 0,   -- requests available at updated_at
    tok_level    double precision NOT NULL DEFAULT 0,   -- tokens in the bucket at updated_at
    tok_held     double precision NOT NULL DEFAULT 0,   -- sum of unsettled reservations; available = level - held
    updated_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    paused_until timestamptz NOT NULL DEFAULT 'epoch',
    -- the waiter everyone else leaves room for (anti-starvation; oldest waiter wins)
    head_ticket  bigint,
    head_tokens  double precision NOT NULL DEFAULT 0,
    head_since   timestamptz,
    head_until   timestamptz,
    -- the outcome of the latest take, written in the row it was decided on
    -- because RETURNING cannot see the old row in PostgreSQL 15
    last_ticket  bigint,
    last_ok      boolean NOT NULL DEFAULT false,
    last_wait    double precision NOT NULL DEFAULT 0,   -- seconds
    last_tokens  double precision NOT NULL DEFAULT 0    -- tokens held by the take (clamped to capacity)
);

CREATE TABLE IF NOT EXISTS ratelimit_reservations (
    id         bigserial PRIMARY KEY,
    key_hash   text NOT NULL REFERENCES ratelimit_buckets (key_hash) ON DELETE CASCADE,
    tokens     double precision NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz NOT NULL
);

CREATE INDEX IF NOT EXISTS ratelimit_reservations_expiry
    ON ratelimit_reservations (key_hash, expires_at);

-- ratelimit_refill returns the bucket as it stands at now: levels refilled at
-- their per-minute rates, capped at capacity. It reads no table, so it is only
-- ever applied to the row an UPDATE has locked.
CREATE OR REPLACE FUNCTION ratelimit_refill(b ratelimit_buckets, now timestamptz)
RETURNS ratelimit_buckets LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    el double precision := greatest(0, extract(epoch FROM now - b.updated_at));
BEGIN
    IF b.rpm > 0 THEN
        b.req_level := least(greatest(1, b.rpm * b.burst / 60), b.req_level + b.rpm / 60 * el);
    END IF;
    IF b.tpm > 0 THEN
        b.tok_level := least(greatest(1, b.tpm * b.burst / 60), b.tok_level + b.tpm / 60 * el);
    END IF;
    b.updated_at := greatest(b.updated_at, now);
    RETURN b;
END $$;

-- ratelimit_take_step decides one take of one request and n tokens at now and
-- returns the new row: taken (last_ok) or not, with the seconds to wait
-- (last_wait). A waiter that fails claims the head when there is none, when
-- the head has gone stale, or when it has waited longer than the head; while a
-- head is live others may take only what leaves the head's need in the bucket.
-- Waiters sleep at most max_sleep seconds between asks.
CREATE OR REPLACE FUNCTION ratelimit_take_step(
    b ratelimit_buckets, n double precision, ticket bigint, since timestamptz,
    now timestamptz, max_sleep double precision, grace double precision)
RETURNS ratelimit_buckets LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    cap_tok   double precision;
    need      double precision := n;
    head_live boolean := b.head_ticket IS NOT NULL AND b.head_until > now;
    mine      boolean := b.head_ticket IS NOT DISTINCT FROM ticket;
    res_req   double precision := 0;
    res_tok   double precision := 0;
    wait      double precision;
BEGIN
    b := ratelimit_refill(b, now);
    IF b.tpm > 0 THEN
        cap_tok := greatest(1, b.tpm * b.burst / 60);
        need := least(n, cap_tok);   -- a request larger than the bucket waits for a full bucket
    END IF;
    IF head_live AND NOT mine THEN
        res_req := 1;
        res_tok := b.head_tokens;
    END IF;
    wait := greatest(0, extract(epoch FROM b.paused_until - now));
    IF b.rpm > 0 THEN
        wait := greatest(wait, (1 + res_req - b.req_level) / (b.rpm / 60));
    END IF;
    IF b.tpm > 0 THEN
        wait := greatest(wait, (need + res_tok + b.tok_held - b.tok_level) / (b.tpm / 60));
    END IF;
    b.last_ticket := ticket;
    b.last_tokens := need;
    IF wait <= 0 THEN
        IF b.rpm > 0 THEN
            b.req_level := b.req_level - 1;
        END IF;
        b.tok_held := b.tok_held + need;
        b.last_ok := true;
        b.last_wait := 0;
        IF mine THEN
            b.head_ticket := NULL;
            b.head_tokens := 0;
            b.head_since := NULL;
            b.head_until := NULL;
        END IF;
        RETURN b;
    END IF;
    b.last_ok := false;
    b.last_wait := wait;
    IF NOT head_live OR mine OR since < b.head_since THEN
        b.head_ticket := ticket;
        b.head_tokens := need;
        b.head_since := since;
        -- the head sleeps at most max_sleep before it asks again; a head that
        -- does not come back within grace of that is presumed dead
        b.head_until := now + make_interval(secs => least(wait, max_sleep) + grace);
    END IF;
    RETURN b;
END $$;
