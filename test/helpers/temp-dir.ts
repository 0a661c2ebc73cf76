/** Temporary directories for tests, removed when the test process exits (after every teardown has read them). */
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs: string[] = [];
process.once('exit', () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A new, empty directory named `<prefix>XXXXXX` in the system's temporary folder. */
export async function tempDir(prefix = 'fittingroom-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
