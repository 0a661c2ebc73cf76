/**
 * The retention sweep on a shared database, run by every API process on its timer and done by one at a time: a
 * sweep that finds another node's sweep under way (its advisory lock) skips, so an expiry is carried out once. As
 * on one PC (jobs/retention.ts): finished try-ons whose images are past retention are marked erased and their
 * images removed, stored Idempotency-Key replies past theirs are forgotten, due trial credits expire; and the rows
 * that only ended (GUI sessions, take-home links) are deleted.
 *
 * With images in the database they go in the same transaction as the records that stop pointing at them; with a
 * shared directory the files are removed after the commit (a crash in between leaves files no record names).
 */
import { eraseRecord } from '../../jobs/generations.ts';
import type { GenerationRecord } from '../../store/schema.ts';
import type { ImageStore } from '../images.ts';
import type { PgState } from './gateway.ts';
import { PgImageStore } from './images.ts';

/** pg_try_advisory_xact_lock key: "fr" + "sw"(eep). */
const SWEEP_LOCK = 0x66727377;

export interface PgSweepReport {
  /** The try-ons whose images expired. */
  imagesExpired: string[];
  idempotencyForgotten: number;
  creditsExpired: number;
  sessionsEnded: number;
  sharesExpired: number;
}

export class PgRetention {
  constructor(
    private readonly state: PgState,
    private readonly images: ImageStore,
  ) {}

  /** Sweeps once; null when another node's sweep holds the lock (it does the work). */
  async sweep(now: Date): Promise<PgSweepReport | null> {
    const inDatabase = this.images instanceof PgImageStore;
    const report = await this.state.db.transaction(async (sql) => {
      const { rows: lock } = await sql.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS got', [SWEEP_LOCK]);
      if (!lock[0]?.got) return null;
      const { rows } = await sql.query<{ record: GenerationRecord }>(
        `SELECT record FROM generations
         WHERE status <> 'pending' AND NOT (record ->> 'erased')::boolean AND record ->> 'expiresAt' <= $1
         ORDER BY id FOR UPDATE`,
        [now.toISOString()],
      );
      for (const { record } of rows) {
        eraseRecord(record, 'all');
        await sql.query('UPDATE generations SET record = $2 WHERE id = $1', [record.id, record]);
      }
      const imagesExpired = rows.map(({ record }) => record.id);
      if (inDatabase && imagesExpired.length > 0) await sql.query('DELETE FROM images WHERE gen_id = ANY($1)', [imagesExpired]);
      const idempotency = await sql.query('DELETE FROM idempotency WHERE status IS NOT NULL AND expires_at <= $1', [now]);
      const sessions = await sql.query('DELETE FROM gui_sessions WHERE expires_at <= $1', [now]);
      const shares = await sql.query('DELETE FROM gui_shares WHERE expires_at <= $1', [now]);
      return {
        imagesExpired,
        idempotencyForgotten: idempotency.rowCount ?? 0,
        creditsExpired: 0,
        sessionsEnded: sessions.rowCount ?? 0,
        sharesExpired: shares.rowCount ?? 0,
      };
    });
    if (!report) return null;
    if (!inDatabase) for (const id of report.imagesExpired) await this.images.removeGeneration(id);
    report.creditsExpired = await this.state.expireDueCredits(now);
    return report;
  }
}
