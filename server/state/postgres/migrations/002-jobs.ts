/** Migration 2: leases on try-ons for GPU workers on other machines, and the fleet of workers (issue 16). */
import type { Migration } from '../migrations.ts';

export const migration: Migration = {
  version: 2,
  name: 'job leases and workers',
  sql: `
-- A worker holds a pending try-on while it runs it, until lease_until; a lease that runs out (its worker died) lets
-- another worker claim the try-on again. Only a running, pending try-on can be held, so settling it must end the lease.
ALTER TABLE generations
  ADD COLUMN engine text GENERATED ALWAYS AS (record ->> 'engine') STORED,
  ADD COLUMN claimed_by text,
  ADD COLUMN lease_until timestamptz,
  ADD CONSTRAINT generations_lease_whole CHECK ((claimed_by IS NULL) = (lease_until IS NULL)),
  ADD CONSTRAINT generations_lease_only_while_running
    CHECK (claimed_by IS NULL OR (status = 'pending' AND record ->> 'stage' = 'running'));
CREATE INDEX generations_claimable ON generations (engine, created_at) WHERE status = 'pending';
CREATE INDEX generations_held ON generations (claimed_by) WHERE claimed_by IS NOT NULL;

-- Every claim and renewal updates a try-on, and generation_credit_agrees then reads its ledger entries at commit.
CREATE INDEX ledger_by_generation ON ledger (gen_id) WHERE gen_id IS NOT NULL;

CREATE TABLE workers (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  engines jsonb NOT NULL CHECK (jsonb_typeof(engines) = 'array'),
  device text NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at timestamptz NOT NULL,
  -- Set when the worker shuts down: it takes no more jobs and leaves the fleet.
  stopping boolean NOT NULL DEFAULT false
);
`,
};
