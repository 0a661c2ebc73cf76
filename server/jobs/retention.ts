/**
 * Sweeps that keep the state small and honour retention: images expire after
 * `imageRetentionDays`, idempotency replies after `idempotencyRetentionHours`,
 * trial credits on their date. At start-up, image folders that no record
 * points to (a crash between writing files and committing the submit) go too.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { expireDueCredits } from '../credits/ledger.ts';
import { sweepIdempotency } from '../idempotency/idempotency.ts';
import { listImageDirs, removeGenerationImages } from '../images/files.ts';
import type { Store } from '../store/db.ts';
import { markErased } from './generations.ts';

export interface SweepReport {
  imagesExpired: number;
  idempotencyForgotten: number;
  creditsExpired: number;
}

/** Runs the periodic sweep once. */
export async function sweep(store: Store, now: Date): Promise<SweepReport> {
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
  return report;
}

/** Removes files no record needs; only safe before the server accepts requests. */
export async function cleanOrphans(store: Store): Promise<number> {
  let removed = 0;
  for (const id of await listImageDirs(store.dataDir)) {
    const record = store.state.generations[id];
    if (!record || record.erased) {
      await removeGenerationImages(store.dataDir, id);
      removed++;
    }
  }
  await rm(join(store.dataDir, 'work'), { recursive: true, force: true });
  return removed;
}
