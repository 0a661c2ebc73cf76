/**
 * Notices between the nodes of a shared database, sent with `pg_notify` inside the transaction that causes them, so
 * that PostgreSQL delivers one at that transaction's commit and never one for a transaction that rolled back:
 * - `fittingroom_settled` (payload: the try-on's id) from `settleLocked`, the one path that makes a try-on terminal,
 *   so that an API process wakes its bounded waits (`GET …?wait=`) on try-ons that another node settled;
 * - `fittingroom_queued` (payload: the engine id) from `PgState.submit`, so that an idle worker claims at once
 *   instead of at its next poll.
 * A notice is a hint, not a record: one sent while a listener's connection is down is lost, so after reconnecting
 * `PgNotices` reports a gap and its owner re-reads whatever it was waiting for.
 */
import type { ListenOptions, Listening, PgDatabase, Sql } from './db.ts';

export const SETTLED_CHANNEL = 'fittingroom_settled';
export const QUEUED_CHANNEL = 'fittingroom_queued';

/** Tells every node, at commit, that try-on `id` has become terminal (the caller's transaction settles it). */
export async function notifySettled(sql: Sql, id: string): Promise<void> {
  await sql.query('SELECT pg_notify($1, $2)', [SETTLED_CHANNEL, id]);
}

/** Tells every node, at commit, that a try-on for `engine` is waiting to be claimed. */
export async function notifyQueued(sql: Sql, engine: string): Promise<void> {
  await sql.query('SELECT pg_notify($1, $2)', [QUEUED_CHANNEL, engine]);
}

export interface NoticeHandlers {
  /** A try-on became terminal (on this node or another); reading it now sees its end. */
  settled?: (id: string) => void;
  /** A try-on for `engine` was submitted. */
  queued?: (engine: string) => void;
  /** Notices may have been lost (the connection dropped and came back): re-read whatever is waited for. */
  gap: () => void;
  /** A drop or a failed reconnect (default: console.error). */
  log?: (message: string, error?: unknown) => void;
}

/** Hears the notices that `handlers` asks for (settled, queued or both) on a connection of its own. */
export class PgNotices {
  private constructor(private readonly listening: Listening) {}

  /** Resolves once it is listening: a notice sent after that is heard. */
  static async start(db: PgDatabase, handlers: NoticeHandlers, options: ListenOptions = {}): Promise<PgNotices> {
    const { settled, queued } = handlers;
    const channels = [...(settled ? [SETTLED_CHANNEL] : []), ...(queued ? [QUEUED_CHANNEL] : [])];
    if (channels.length === 0) throw new Error('PgNotices needs a settled or a queued handler');
    const listening = await db.listen(
      channels,
      {
        notice(channel, payload) {
          if (channel === SETTLED_CHANNEL) settled?.(payload);
          else if (channel === QUEUED_CHANNEL) queued?.(payload);
        },
        reconnected: handlers.gap,
        log: handlers.log,
      },
      options,
    );
    return new PgNotices(listening);
  }

  /** Ends the connection; nothing is called after this resolves. */
  close(): Promise<void> {
    return this.listening.close();
  }
}
