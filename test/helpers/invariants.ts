/**
 * The ledger invariants, checked from scratch (not through the ledger
 * module's cache) so that a bug there cannot hide itself:
 * 1. no lot's available balance is ever negative, at any point of the ledger;
 * 2. each reservation is resolved at most once;
 * 3. every terminal generation has exactly one resolved reservation:
 *    captured if complete, released otherwise; a pending one has one open;
 * 4. no reservation without a generation.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GenerationRecord, LedgerEntry, State } from '../../server/store/schema.ts';

/** What the archive holds (see server/store/archive.ts). */
export interface Archived {
  generations: GenerationRecord[];
  ledger: LedgerEntry[];
}

/**
 * Asserts the ledger invariants on a state and its archive: the archived
 * entries up to the state's ledger base, then the state's own, over the
 * generations of both.
 */
export function assertLedgerInvariants(state: State, archived: Archived = { generations: [], ledger: [] }): void {
  const through = state.ledgerBase?.throughSeq ?? 0;
  const ledger = [...archived.ledger.filter((entry) => entry.seq <= through), ...state.ledger];
  const generations: Record<string, GenerationRecord> = {};
  for (const record of archived.generations) generations[record.id] = record;
  Object.assign(generations, state.generations);
  const available = { trial: 0, paid: 0 };
  const reserved = new Map<string, number>();
  const resolved = new Map<string, Array<'capture' | 'release'>>();
  let lastSeq = 0;
  for (const entry of ledger) {
    assert.ok(entry.seq === lastSeq + 1, `ledger seq must follow on (entry ${entry.id}: ${entry.seq} after ${lastSeq})`);
    lastSeq = entry.seq;
    switch (entry.type) {
      case 'trial':
      case 'redeem':
      case 'adjust':
        available[entry.lot] += entry.amount;
        break;
      case 'expire':
        available[entry.lot] -= entry.amount;
        break;
      case 'reserve':
        assert.ok(entry.genId, 'a reservation names its generation');
        assert.ok(!reserved.has(entry.genId!), `generation ${entry.genId} reserved twice`);
        reserved.set(entry.genId!, entry.amount);
        available[entry.lot] -= entry.amount;
        break;
      case 'capture':
      case 'release': {
        assert.ok(entry.genId && reserved.has(entry.genId), `a ${entry.type} without a reservation (${entry.id})`);
        const list = resolved.get(entry.genId!) ?? [];
        list.push(entry.type);
        resolved.set(entry.genId!, list);
        assert.equal(list.length, 1, `reservation of ${entry.genId} resolved ${list.length} times`);
        if (entry.type === 'release') available[entry.lot] += entry.amount;
        break;
      }
    }
    assert.ok(
      available.trial >= 0 && available.paid >= 0,
      `available balance negative after entry ${entry.seq}: ${JSON.stringify(available)}`,
    );
  }
  for (const genId of reserved.keys()) assert.ok(generations[genId], `reservation for unknown generation ${genId}`);
  for (const record of Object.values(generations)) {
    assert.ok(reserved.has(record.id), `generation ${record.id} has no reservation`);
    const outcome = resolved.get(record.id) ?? [];
    if (record.status === 'pending') {
      assert.deepEqual(outcome, [], `pending generation ${record.id} has a resolved reservation`);
      assert.equal(record.credit, 'reserved');
    } else {
      assert.deepEqual(
        outcome,
        [record.status === 'complete' ? 'capture' : 'release'],
        `generation ${record.id} (${record.status}) resolution`,
      );
      assert.equal(record.credit, record.status === 'complete' ? 'captured' : 'released');
    }
  }
}

/** Reads the durable state of a data directory. */
export async function readDurableState(dataDir: string): Promise<State> {
  return JSON.parse(await readFile(join(dataDir, 'state.json'), 'utf8')) as State;
}

async function readJsonLines<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as T);
}

/** Reads the durable archive of a data directory. */
export async function readDurableArchive(dataDir: string): Promise<Archived> {
  return {
    generations: await readJsonLines<GenerationRecord>(join(dataDir, 'archive', 'generations.jsonl')),
    ledger: await readJsonLines<LedgerEntry>(join(dataDir, 'archive', 'ledger.jsonl')),
  };
}

/** Asserts the ledger invariants on what a data directory holds durably. */
export async function assertDurableInvariants(dataDir: string): Promise<void> {
  assertLedgerInvariants(await readDurableState(dataDir), await readDurableArchive(dataDir));
}
