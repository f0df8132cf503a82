-- Tokens held by calls in flight no longer use up the bucket's capacity: the
-- refill stops when what is available (level - held) is full, not when the
-- level is. With the capacity counted against the level, a bucket a few calls
-- big stopped refilling while those calls were in flight, and a quota shared
-- by three writers ran at two thirds of its rate. What a window admits is
-- unchanged: a settle frees what it held and spends what it cost, so the
-- holds of admitted calls are not capacity for new ones.
CREATE OR REPLACE FUNCTION ratelimit_refill(b ratelimit_buckets, now timestamptz)
RETURNS ratelimit_buckets LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    el double precision := greatest(0, extract(epoch FROM now - b.updated_at));
BEGIN
    IF b.rpm > 0 THEN
        b.req_level := least(greatest(1, b.rpm * b.burst / 60), b.req_level + b.rpm / 60 * el);
    END IF;
    IF b.tpm > 0 THEN
        b.tok_level := least(greatest(1, b.tpm * b.burst / 60) + b.tok_held, b.tok_level + b.tpm / 60 * el);
    END IF;
    b.updated_at := greatest(b.updated_at, now);
    RETURN b;
END $$;
