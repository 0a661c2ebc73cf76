/**
 * Reads over everything the appliance has recorded: the state's hot records
 * and the archive's cold ones. The archive holds the ledger up to
 * `state.ledgerBase.throughSeq`; after a crash between its two steps it may
 * also hold records the state still has, and then the state's copy counts.
 */
import type { Archive } from '../store/archive.ts';
import type { GenerationRecord, LedgerEntry, State } from '../store/schema.ts';

/** The part of the archive these reads need. */
export type ArchiveReader = Pick<Archive, 'ledgerEntries' | 'ids' | 'generation'>;

/** Every ledger entry, oldest first: the archived prefix, then the state's own. */
export function* allLedgerEntries(state: State, archive: ArchiveReader): Generator<LedgerEntry> {
  const through = state.ledgerBase?.throughSeq ?? 0;
  for (const entry of archive.ledgerEntries()) {
    if (entry.seq > through) break;
    yield entry;
  }
  yield* state.ledger;
}

/** Every generation, each once: the state's, then the archived ones the state no longer has. */
export function* allGenerations(state: State, archive: ArchiveReader): Generator<GenerationRecord> {
  yield* Object.values(state.generations);
  for (const id of archive.ids()) {
    if (state.generations[id]) continue;
    const record = archive.generation(id);
    if (record) yield record;
  }
}

/** The index of the first entry with a seq above `seq` (entries are in seq order). */
function upperBound(entries: readonly LedgerEntry[], seq: number): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (entries[mid]!.seq <= seq) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** One page of the ledger, newest first. */
export interface LedgerPage {
  entries: LedgerEntry[];
  /** The seq to pass as `before` for the next page; null on the last page. */
  nextBefore: number | null;
}

/** Up to `limit` entries with a seq below `before` (all when null), newest first. */
export function ledgerPage(state: State, archive: ArchiveReader, before: number | null, limit: number): LedgerPage {
  const through = state.ledgerBase?.throughSeq ?? 0;
  const top = before === null ? Number.MAX_SAFE_INTEGER : before - 1;
  const entries: LedgerEntry[] = [];
  const take = (list: readonly LedgerEntry[], maxSeq: number) => {
    for (let i = upperBound(list, maxSeq) - 1; i >= 0 && entries.length <= limit; i--) entries.push(list[i]!);
  };
  take(state.ledger, top);
  take(archive.ledgerEntries(), Math.min(top, through));
  const page = entries.slice(0, limit);
  return { entries: page, nextBefore: entries.length > limit ? page[page.length - 1]!.seq : null };
}
