/**
 * The warp engine in process for one suite: loaded before its tests, disposed after them, with a work directory
 * removed then.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { WarpEngine } from '../../server/engines/warp/engine.ts';

export function warpEngineForSuite(prefix: string): { engine: WarpEngine; work: string } {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const engine = new WarpEngine();
  before(async () => {
    await engine.load();
  });
  after(async () => {
    await engine.dispose();
    rmSync(work, { recursive: true, force: true });
  });
  return { engine, work };
}
