/**
 * The ids of the vouchers redeemed here, in an append-only file beside the state (`vouchers-redeemed.jsonl`).
 * A voucher's redemption is recorded in the state, but a state.json restored from an older backup would forget
 * it and credit the same voucher again; the journal, written after each redemption and never rewritten, still
 * knows it. At start the state's redemptions the journal lacks (a crash between the two writes) are added, and
 * the journal's ids the state lacks are reported: the sign of a restored state file. Restoring the whole data
 * directory, journal included, cannot be detected offline; vouchers bound to the installation and expiring
 * limit what it allows.
 */
import { join } from 'node:path';
import { appendLinesDurably, readJsonLines } from '../kernel/durable-fs.ts';

const FILE = 'vouchers-redeemed.jsonl';

interface Line {
  id: string;
  redeemedAt: string;
}

export class RedemptionJournal {
  private readonly ids = new Set<string>();

  private constructor(private readonly path: string) {}

  static async open(dataDir: string): Promise<RedemptionJournal> {
    const journal = new RedemptionJournal(join(dataDir, FILE));
    for (const line of await readJsonLines<Line>(journal.path)) journal.ids.add(line.id);
    return journal;
  }

  /** Whether this installation ever redeemed the voucher, whatever its state file says. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Records a redemption durably (after the state's own record of it). */
  async add(id: string, redeemedAt: Date): Promise<void> {
    if (this.ids.has(id)) return;
    await appendLinesDurably(this.path, [JSON.stringify({ id, redeemedAt: redeemedAt.toISOString() } satisfies Line)]);
    this.ids.add(id);
  }

  /** Adds the state's redemptions the journal lacks; returns the journal's ids the state does not know. */
  async reconcile(redeemed: Record<string, { redeemedAt: string }>): Promise<string[]> {
    const missing = Object.entries(redeemed).filter(([id]) => !this.ids.has(id));
    if (missing.length > 0)
      await appendLinesDurably(
        this.path,
        missing.map(([id, record]) => JSON.stringify({ id, redeemedAt: record.redeemedAt } satisfies Line)),
      );
    for (const [id] of missing) this.ids.add(id);
    return [...this.ids].filter((id) => !Object.hasOwn(redeemed, id));
  }
}
