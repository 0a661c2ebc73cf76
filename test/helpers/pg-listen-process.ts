/**
 * A child process for pg-notices.test.ts: opens a database at `argv[2]`, starts PgNotices, closes them and the pool,
 * and must then exit by itself (nothing left holding the event loop). With `--dropped` it first terminates its own
 * LISTEN connection and closes while waiting a minute to reconnect, so a reconnect timer that close() left running
 * would keep the process alive. Prints `closed` once both are closed.
 */
import { LISTEN_APPLICATION_NAME, PgDatabase } from '../../server/state/postgres/db.ts';
import { PgNotices } from '../../server/state/postgres/notices.ts';

const [url, mode] = process.argv.slice(2);
if (!url) throw new Error('usage: pg-listen-process.ts URL [--dropped]');
const db = await PgDatabase.open(url, { maxConnections: 1 });
let dropped!: () => void;
const drop = new Promise<void>((resolve) => (dropped = resolve));
const notices = await PgNotices.start(
  db,
  { settled: () => undefined, gap: () => process.stdout.write('gap\n'), log: () => dropped() },
  { retryMs: { first: 60_000, last: 60_000 } },
);
if (mode === '--dropped') {
  await db.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
    LISTEN_APPLICATION_NAME,
  ]);
  await drop;
}
await notices.close();
await db.close();
process.stdout.write('closed\n');
