-- Spend in money: each model call's cached prompt and reasoning tokens (as
-- the provider reported them, inside its prompt and completion counts) and
-- its cost at the model's price; a run's cap in dollars beside its cap in
-- tokens.
ALTER TABLE spend ADD COLUMN IF NOT EXISTS cached_tokens integer NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN IF NOT EXISTS reasoning_tokens integer NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN IF NOT EXISTS cost_usd double precision NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN IF NOT EXISTS priced boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS budget_usd double precision NOT NULL DEFAULT 0; -- 0: no cap
