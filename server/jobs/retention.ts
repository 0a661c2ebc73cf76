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
import { findGeneration, type Archive } from '../store/archive.ts';
import type { GenerationRecord, State } from '../store/schema.ts';
import { sweepIdempotency } from '../idempotency/idempotency.ts';
import { listImageDirs, removeGenerationImages } from '../images/files.ts';
import { removeTempFiles } from '../kernel/durable-fs.ts';
import type { Store } from '../store/db.ts';
import { eraseRecord, markErased } from './generations.ts';

export interface SweepReport {
  imagesExpired: number;
  idempotencyForgotten: number;
  creditsExpired: number;
  /** Generations moved to the archive. */
  archived: number;
}

/** Runs the periodic sweep once: expiries, then a move of finished records to the archive. */
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
      idempotencyForgotten: sweepIdempotency(state, now),
      creditsExpired: expireDueCredits(state, now),
    };
  });
  const archivedExpired = archive.expiringBy(now);
  await archive.append(
    archivedExpired.map((record) => erasedCopy(record, 'all')),
    [],
  );
  for (const id of [...expired, ...archivedExpired.map((record) => record.id)]) await removeGenerationImages(store.dataDir, id);
  const archived = await archiveCold(store, archive, archiveMinEntries);
  return { ...report, imagesExpired: expired.length + archivedExpired.length, archived };
}

/**
 * Marks a try-on's inputs, or all its images, erased wherever its record lives: in the state or, once moved,
 * in the archive (as a new version). The caller removes the files. False when neither holds the try-on.
 */
export async function markErasedAnywhere(store: Store, archive: Archive, id: string, what: 'all' | 'inputs'): Promise<boolean> {
  const inState = await store.mutate((state) => {
    if (!Object.hasOwn(state.generations, id)) return false;
    markErased(state, id, what);
    return true;
  });
  if (inState) return true;
  // Records leave the state only after the archive holds them, so a try-on the state lacks is archived (or unknown).
  const held = archive.generation(id);
  if (!held) return false;
  await archive.append([erasedCopy(held, what)], []);
  return true;
}

function erasedCopy(record: GenerationRecord, what: 'all' | 'inputs'): GenerationRecord {
  const copy = structuredClone(record);
  eraseRecord(copy, what);
  return copy;
}

/** Removes files no record needs; only safe before the server accepts requests. */
export async function cleanOrphans(store: Store, archive: Archive): Promise<number> {
  let removed = 0;
  for (const id of await listImageDirs(store.dataDir)) {
    const record = findGeneration(store.state, archive, id);
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
 * Moves finished records to the archive: the longest prefix of the ledger whose
 * entries all belong to terminal generations (and whose reservations all
 * resolve inside it), together with those generations. The state keeps a
 * ledger base with the balances carried over. Moves nothing until at least
 * `minEntries` entries can go, so that records move in batches. A record that
 * changed between the two steps (erased meanwhile) stays in the state, and the
 * next move appends its new version. Returns how many generations moved.
 */
export async function archiveCold(store: Store, archive: Archive, minEntries: number): Promise<number> {
  const cold = (state: State, id: string) => {
    const record = state.generations[id];
    return record !== undefined && record.status !== 'pending';
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
  const entries = end >= minEntries ? ledger.slice(0, end) : [];
  // Every generation not named by the ledger that stays: those of the moved prefix, and any an earlier move left
  // behind because it changed between the two steps.
  const staying = new Set(ledger.slice(entries.length).flatMap((entry) => (entry.genId ? [entry.genId] : [])));
  const ids = Object.keys(generations).filter((id) => !staying.has(id) && cold(store.state, id));
  if (entries.length === 0 && ids.length === 0) return 0;
  await archive.append(
    ids.map((id) => generations[id]!),
    entries,
  );
  await store.mutate((state) => {
    if (entries.length > 0) {
      // The prefix cannot have changed (the ledger only grows, a terminal record stays terminal); check anyway.
      const lastSeq = entries[entries.length - 1]!.seq;
      if (state.ledger[entries.length - 1]?.seq !== lastSeq || ids.some((id) => !cold(state, id))) return;
      const balances = baseBalances(state.ledgerBase);
      for (const entry of entries) applyEntry(balances, entry);
      state.ledgerBase = ledgerBaseOf(balances, lastSeq);
      state.ledger = state.ledger.slice(entries.length);
    }
    for (const id of ids) if (cold(state, id) && archive.holds(state.generations[id]!)) delete state.generations[id];
  });
  return ids.length;
}
