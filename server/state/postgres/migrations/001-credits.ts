/** Migration 1: credits, vouchers, try-ons, idempotency and the webhook outbox, with their invariants. */
import type { Migration } from '../migrations.ts';

export const migration: Migration = {
  version: 1,
  name: 'credits, vouchers, try-ons, idempotency, webhook outbox',
  sql: `
CREATE TABLE credit_lots (
  lot text PRIMARY KEY CHECK (lot IN ('trial', 'paid')),
  available integer NOT NULL DEFAULT 0 CONSTRAINT credit_lots_no_overdraft CHECK (available >= 0),
  reserved integer NOT NULL DEFAULT 0 CHECK (reserved >= 0),
  spent integer NOT NULL DEFAULT 0 CHECK (spent >= 0),
  expires_at timestamptz
);
INSERT INTO credit_lots (lot) VALUES ('trial'), ('paid');

CREATE TABLE ledger (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  type text NOT NULL CHECK (type IN ('trial', 'redeem', 'reserve', 'capture', 'release', 'expire', 'adjust')),
  amount integer NOT NULL,
  lot text NOT NULL REFERENCES credit_lots (lot),
  at timestamptz NOT NULL,
  gen_id text,
  expires_at timestamptz,
  note text,
  CHECK (type = 'adjust' OR amount > 0),
  CHECK (type NOT IN ('reserve', 'capture', 'release') OR (amount = 1 AND gen_id IS NOT NULL)),
  CHECK ((type = 'trial') = (expires_at IS NOT NULL)),
  CHECK (type <> 'trial' OR lot = 'trial')
);
CREATE UNIQUE INDEX ledger_one_reservation ON ledger (gen_id) WHERE type = 'reserve';
CREATE UNIQUE INDEX ledger_one_resolution ON ledger (gen_id) WHERE type IN ('capture', 'release');

CREATE FUNCTION ledger_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held text;
BEGIN
  IF NEW.type IN ('capture', 'release') THEN
    SELECT lot INTO held FROM ledger WHERE gen_id = NEW.gen_id AND type = 'reserve';
    IF held IS NULL OR held <> NEW.lot THEN
      RAISE EXCEPTION 'try-on % holds no reservation in the % lot', NEW.gen_id, NEW.lot
        USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_resolves_a_reservation';
    END IF;
    IF EXISTS (SELECT 1 FROM ledger WHERE gen_id = NEW.gen_id AND type IN ('capture', 'release')) THEN
      RAISE EXCEPTION 'the reservation of try-on % is already resolved', NEW.gen_id
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'ledger_one_resolution';
    END IF;
  END IF;
  UPDATE credit_lots SET
    available = available + CASE
      WHEN NEW.type IN ('trial', 'redeem', 'adjust', 'release') THEN NEW.amount
      WHEN NEW.type IN ('reserve', 'expire') THEN -NEW.amount
      ELSE 0 END,
    reserved = reserved + CASE
      WHEN NEW.type = 'reserve' THEN NEW.amount
      WHEN NEW.type IN ('capture', 'release') THEN -NEW.amount
      ELSE 0 END,
    spent = spent + CASE WHEN NEW.type = 'capture' THEN NEW.amount ELSE 0 END,
    expires_at = CASE WHEN NEW.type = 'trial' THEN NEW.expires_at ELSE expires_at END
  WHERE lot = NEW.lot;
  RETURN NEW;
END $$;
CREATE TRIGGER ledger_apply BEFORE INSERT ON ledger FOR EACH ROW EXECUTE FUNCTION ledger_apply();

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the ledger is append-only' USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_append_only';
END $$;
CREATE TRIGGER ledger_no_update BEFORE UPDATE OR DELETE ON ledger FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER credit_lots_no_truncate BEFORE TRUNCATE ON credit_lots FOR EACH STATEMENT EXECUTE FUNCTION ledger_append_only();

CREATE TABLE vouchers (
  id text PRIMARY KEY,
  credits integer NOT NULL CHECK (credits > 0),
  redeemed_at timestamptz NOT NULL,
  key_id text NOT NULL
);

CREATE TABLE generations (
  id text PRIMARY KEY,
  record jsonb NOT NULL,
  status text GENERATED ALWAYS AS (record ->> 'status') STORED
    CHECK (status IN ('pending', 'complete', 'failed', 'canceled')),
  credit text GENERATED ALWAYS AS (record ->> 'credit') STORED
    CHECK (credit IN ('reserved', 'captured', 'released')),
  key_id text GENERATED ALWAYS AS (record ->> 'keyId') STORED NOT NULL,
  created_at text GENERATED ALWAYS AS (record ->> 'createdAt') STORED NOT NULL,
  CHECK (record ->> 'id' = id),
  CHECK ((status = 'pending') = (credit = 'reserved')),
  CHECK ((status = 'complete') = (credit = 'captured'))
);
CREATE INDEX generations_pending ON generations (created_at) WHERE status = 'pending';
CREATE INDEX generations_by_key ON generations (key_id, created_at);

-- A try-on's credit state must agree with the ledger when its transaction commits.
CREATE FUNCTION generation_credit_agrees() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  reserves integer;
  resolution text;
BEGIN
  SELECT count(*) FILTER (WHERE type = 'reserve'), max(type) FILTER (WHERE type IN ('capture', 'release'))
    INTO reserves, resolution FROM ledger WHERE gen_id = NEW.id;
  IF reserves <> 1 OR (NEW.credit = 'reserved' AND resolution IS NOT NULL)
     OR (NEW.credit = 'captured' AND resolution IS DISTINCT FROM 'capture')
     OR (NEW.credit = 'released' AND resolution IS DISTINCT FROM 'release') THEN
    RAISE EXCEPTION 'try-on % is recorded as credit %, which its ledger entries do not show', NEW.id, NEW.credit
      USING ERRCODE = 'check_violation', CONSTRAINT = 'generation_credit_agrees';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER generation_credit_agrees AFTER INSERT OR UPDATE ON generations
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION generation_credit_agrees();

CREATE TABLE idempotency (
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  -- The request holding the key while it executes; its lease runs out if its process dies.
  token text NOT NULL,
  lease_until timestamptz,
  -- The stored reply, once the request's side effects are written (with them).
  gen_id text UNIQUE REFERENCES generations (id) ON DELETE SET NULL,
  status integer,
  headers jsonb,
  body text,
  created_at timestamptz,
  expires_at timestamptz,
  PRIMARY KEY (scope, key),
  CHECK ((lease_until IS NULL) = (status IS NOT NULL)),
  CHECK (status IS NULL OR (headers IS NOT NULL AND body IS NOT NULL AND created_at IS NOT NULL AND expires_at IS NOT NULL))
);

CREATE TABLE webhook_events (
  id text PRIMARY KEY,
  gen_id text NOT NULL REFERENCES generations (id),
  event jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  delivery_state text GENERATED ALWAYS AS (event ->> 'state') STORED
    CHECK (delivery_state IN ('pending', 'delivered', 'failed', 'gone')),
  -- Kept equal to the event's nextAttemptAt by a trigger (a text-to-time cast cannot be a generated column).
  next_attempt_at timestamptz,
  -- The dispatcher sending it now, until when; a claim that runs out (its process died) may be taken.
  claimed_by text,
  lease_until timestamptz,
  CHECK (event ->> 'id' = id),
  CHECK ((claimed_by IS NULL) = (lease_until IS NULL)),
  CHECK (delivery_state = 'pending' OR claimed_by IS NULL)
);
CREATE UNIQUE INDEX webhook_events_one_terminal ON webhook_events (gen_id);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at) WHERE delivery_state = 'pending';

CREATE FUNCTION webhook_event_due() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.next_attempt_at := (NEW.event ->> 'nextAttemptAt')::timestamptz;
  RETURN NEW;
END $$;
CREATE TRIGGER webhook_event_due BEFORE INSERT OR UPDATE ON webhook_events FOR EACH ROW EXECUTE FUNCTION webhook_event_due();
`,
};
