/**
 * The warp engine on a phone-sized photo: one fixture person at 768×1024 and
 * the same photo enlarged to 3000×4000 (12 megapixels, as a phone takes
 * it), with one fixture garment, in process, one ONNX Runtime thread. The
 * garment's cut-out is cached after the first run (as for a catalogue
 * garment), so the figures are the person side: analysis, fitting,
 * compositing and, for the large photo, working at one megapixel and
 * blending back. Prints the median of each and their ratio, and the
 * process's peak resident memory.
 *
 * Usage: npm run bench:large [-- --runs 7]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { EngineRequest } from '../server/engines/types.ts';
import { WarpEngine } from '../server/engines/warp/engine.ts';
import { median } from './helpers/stats.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'shared', 'fixtures');
const PERSON = join(FIXTURES, 'people', 'viton_00034_00.jpg');
const GARMENT = join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg');
const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 7;

const work = mkdtempSync(join(tmpdir(), 'fittingroom-large-'));
const large = join(work, 'person-12mp.jpg');
writeFileSync(large, await sharp(PERSON).resize(3000, 4000, { kernel: 'lanczos3' }).jpeg({ quality: 92 }).toBuffer());

const engine = new WarpEngine({ threads: 1 });
await engine.load();
const request = (selfie: string, width: number, height: number): EngineRequest => ({
  genId: 'bench',
  selfie: { path: selfie, format: 'jpeg', width, height },
  items: [{ path: GARMENT, format: 'jpeg', width: 768, height: 1024 }],
  categories: ['auto'],
  size: 'M',
  personSize: 'M',
  fit: 'regular',
  styling: [],
  // The API's default: the result is encoded once, as JPEG.
  outputFormat: 'jpeg',
  workDir: work,
});
/** Each stage's times, per photo size (the engine's own named stages). */
const stageTimes = { small: new Map<string, number[]>(), big: new Map<string, number[]>() };
const time = async (req: EngineRequest, into?: Map<string, number[]>): Promise<number> => {
  const started = performance.now();
  const result = await engine.run(req, { signal: new AbortController().signal, onProgress: () => {} });
  for (const stage of result.stages ?? []) into?.set(stage.name, [...(into.get(stage.name) ?? []), stage.ms]);
  return performance.now() - started;
};

await time(request(PERSON, 768, 1024)); // warm-up; caches the garment's cut-out
const small: number[] = [];
const big: number[] = [];
for (let k = 0; k < RUNS; k++) {
  small.push(await time(request(PERSON, 768, 1024), stageTimes.small));
  big.push(await time(request(large, 3000, 4000), stageTimes.big));
}
await engine.dispose();
rmSync(work, { recursive: true, force: true });

const ms = (x: number): string => `${Math.round(x)} ms`;
console.log(`768×1024: median ${ms(median(small))} (${small.map(Math.round).join(', ')})`);
console.log(`3000×4000: median ${ms(median(big))} (${big.map(Math.round).join(', ')})`);
console.log(`ratio: ${(median(big) / median(small)).toFixed(2)}×`);
console.log('stage medians, 768×1024 / 3000×4000:');
for (const [name, times] of stageTimes.big) {
  const smallTimes = stageTimes.small.get(name);
  console.log(`  ${name.padEnd(28)} ${smallTimes ? ms(median(smallTimes)) : '—'} / ${ms(median(times))}`);
}
console.log(`peak resident memory: ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`);
