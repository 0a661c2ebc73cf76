/**
 * File writes that survive a crash or power cut once they return: data is
 * fsynced before the rename that publishes it, and the directory is fsynced
 * after it, so the new name itself is durable.
 */
import { open, readdir, readFile, rename, mkdir, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** fsyncs a directory so that entries created or renamed in it are durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic there.
    if ((error as NodeJS.ErrnoException).code !== 'EISDIR' && (error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  } finally {
    await handle.close();
  }
}

/** The name of a write's temporary file: `.<name>.<12 hex>.tmp` beside the file it will replace. */
const TEMP_FILE = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** Writes `data` to `path` atomically and durably (temp file, fsync, rename, fsync dir); a failed write leaves no temp file. */
export async function writeFileDurably(path: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temp, 'w', 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await fsyncDir(dir);
}

/** Removes the temporary files that writes killed halfway left in `dir`; returns how many went. */
export async function removeTempFiles(dir: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  const temps = names.filter((name) => TEMP_FILE.test(name));
  for (const name of temps) await rm(join(dir, name), { force: true });
  return temps.length;
}

/** Creates a directory (and parents) and makes its entry durable in the parent. */
export async function mkdirDurably(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await fsyncDir(dirname(dir));
}

/** Appends lines to a JSON-lines file and fsyncs it: once this returns, the lines survive a crash. */
export async function appendLinesDurably(path: string, lines: string[]): Promise<void> {
  const handle = await open(path, 'a', 0o600);
  try {
    await handle.writeFile(lines.map((line) => `${line}\n`).join(''));
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The records of a JSON-lines file ([] if it does not exist); a torn last line (a crash mid-append) is dropped. */
export async function readJsonLines<T>(path: string): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const items: T[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (line === '') continue;
    try {
      items.push(JSON.parse(line) as T);
    } catch (error) {
      if (i === lines.length - 1) break;
      throw new Error(`${path} line ${i + 1} is not JSON`, { cause: error });
    }
  }
  return items;
}
