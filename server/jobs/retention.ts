/**
 * Sweeps that keep the state small and honour retention: images expire after
 * `imageRetentionDays`, idempotency replies after `idempotencyRetentionHours`,
 * trial credits on their date. At start-up, image folders that no record
 * points to (a crash between writing files and committing the submit) go too,
 * and so do temporary files that writes cut off by a crash left in the others.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { applyEntry, baseBalances, expireDueCredits, ledgerBaseOf } from '../credits/ledger.ts';
import type { Archive } from '../store/archive.ts';
import type { State } from '../store/schema.ts';
import { sweepIdempotency } from '../idempotency/idempotency.ts';
import { listImageDirs, removeGenerationImages } from '../images/files.ts';
import { removeTempFiles } from '../kernel/durable-fs.ts';
import type { Store } from '../store/db.ts';
import { markErased } from './generations.ts';

export interface SweepReport {
  imagesExpired: number;
  idempotencyForgotten: number;
  creditsExpired: number;
  /** Generations moved to the archive. */
  archived: number;
}

/** Runs the periodic sweep once. */
export async function sweep(store: Store, now: Date, archive: Archive, archiveMinEntries = 1000): Promise<SweepReport> {
  const expired: string[] = [];
  const report = await store.mutate((state) => {
    for (const record of Object.values(state.generations)) {
      if (!record.erased && record.status !== 'pending' && Date.parse(record.expiresAt) <= now.getTime()) {
        markErased(state, record.id, 'all');
        expired.push(record.id);
      }
    }
    return {
      imagesExpired: expired.length,
      idempotencyForgotten: sweepIdempotency(state, now),
      creditsExpired: expireDueCredits(state, now),
    };
  });
  for (const id of expired) await removeGenerationImages(store.dataDir, id);
  const archived = await archiveCold(store, archive, archiveMinEntries);
  return { ...report, archived };
}

/** Removes files no record needs; only safe before the server accepts requests. */
export async function cleanOrphans(store: Store): Promise<number> {
  let removed = 0;
  for (const id of await listImageDirs(store.dataDir)) {
    const record = store.state.generations[id];
    if (!record || record.erased) {
      await removeGenerationImages(store.dataDir, id);
      removed++;
    } else {
      await removeTempFiles(join(store.dataDir, 'images', id));
    }
  }
  await rm(join(store.dataDir, 'work'), { recursive: true, force: true });
  return removed;
}

/**
 * Moves cold records to the archive: the longest prefix of the ledger whose
 * entries all belong to terminal, erased generations (and whose reservations
 * all resolve inside it), together with those generations. The state keeps a
 * ledger base with the balances carried over. Moves nothing until at least
 * `minEntries` entries can go, so that records move in batches and recent
 * history stays in the state. Returns how many generations moved.
 */
export async function archiveCold(store: Store, archive: Archive, minEntries: number): Promise<number> {
  const cold = (state: State, id: string) => {
    const record = state.generations[id];
    return record !== undefined && record.status !== 'pending' && record.erased;
  };
  const { ledger, generations } = store.state;
  const lastIndex = new Map<string, number>();
  ledger.forEach((entry, i) => entry.genId && lastIndex.set(entry.genId, i));
  let end = 0;
  let needed = -1;
  for (const [i, entry] of ledger.entries()) {
    if (entry.genId) {
      if (!cold(store.state, entry.genId)) break;
      needed = Math.max(needed, lastIndex.get(entry.genId)!);
    }
    if (needed <= i) end = i + 1;
  }
  if (end === 0 || end < minEntries) return 0;
  const entries = ledger.slice(0, end);
  const ids = [...new Set(entries.flatMap((entry) => (entry.genId ? [entry.genId] : [])))];
  await archive.append(
    ids.map((id) => generations[id]!),
    entries,
  );
  const lastSeq = entries[entries.length - 1]!.seq;
  await store.mutate((state) => {
    // The prefix cannot have changed (the ledger only grows, erased terminal records never change); check anyway.
    if (state.ledger[end - 1]?.seq !== lastSeq || ids.some((id) => !cold(state, id))) return;
    const balances = baseBalances(state.ledgerBase);
    for (const entry of entries) applyEntry(balances, entry);
    state.ledgerBase = ledgerBaseOf(balances, lastSeq);
    state.ledger = state.ledger.slice(end);
    for (const id of ids) delete state.generations[id];
  });
  return ids.length;
}
