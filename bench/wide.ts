/**
 * The warp engine on the wide fixture set (18 people, 49 garments; see
 * bench/helpers/wide.ts), in process, sequentially, one ONNX Runtime thread.
 * Every person gets six garments spread over the four categories (two tops,
 * an outerwear, a bottom, a dress and one more bottom, dress or top), dealt round
 * robin so that every garment is worn at least twice; every third person
 * also gets a top + bottom outfit, counted apart. The manifest's category
 * is not passed: the engine is asked with `auto`, as a shop would, and the
 * category the engine's cut-out detects is recorded beside it.
 *
 * Written to bench/out/wide/ (emptied first):
 * - <nnn>-<person>-<garment>.png: person | garment | result, 256 px tall, with a caption;
 * - sheet-<k>.png: 12 of those strips, 3 columns × 4 rows;
 * - results.json: one entry per try-on; verdicts.md: the verdict table for bench/RESULTS.md.
 *
 * Verdicts are judged by eye from the sheets and kept in bench/wide-verdicts.json, keyed
 * "<person file>|<garment file>" (an outfit: "<person>|<top>+<bottom>"); a refusal without a
 * stored verdict counts as `refused`. The totals cover the try-ons that have one.
 *
 * - run.json: the code version (commit, uncommitted engine files), the outcome counts and timings.
 *
 * Usage: npm run bench:wide [-- --out DIR]   (or npm run bench:engines -- --wide)
 *        npm run bench:wide -- --verdicts [--out DIR]   (the verdict totals again, from the last results.json)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sharp, { type OverlayOptions } from 'sharp';
import { EngineError, type EngineRequest, type ImageFormat } from '../server/engines/types.ts';
import { GarmentSegmenter } from '../server/engines/warp/cutout/learned.ts';
import { WarpEngine } from '../server/engines/warp/engine.ts';
import { PersonAnalyzer, readRawImage } from '../server/vision/person.ts';
import { median, percentile } from './helpers/stats.ts';
import {
  WIDE,
  WIDE_CATEGORIES,
  blankCell,
  captionBand,
  cell,
  detectCategory,
  idOf,
  loadWide,
  type Detection,
  type WideCategory,
  type WideImage,
} from './helpers/wide.ts';

const outArg = process.argv.indexOf('--out');
/** Where the strips, sheets and tables go: bench/out/wide, or --out DIR (a run that must not share the folder). */
const OUT = outArg >= 0 && process.argv[outArg + 1] ? resolve(process.argv[outArg + 1]!) : join(import.meta.dirname, 'out', 'wide');
const VERDICTS = join(import.meta.dirname, 'wide-verdicts.json');
/** Every cell of a strip: a picture fitted inside 256 × 256 (portrait photos fill the height). */
const CELL = 256;
const SHEET_COLUMNS = 3;
const SHEET_ROWS = 4;
/** Every OUTFIT_EVERY-th person also tries a top + bottom outfit. */
const OUTFIT_EVERY = 3;

type Verdict = 'good' | 'poor' | 'broken' | 'refused';
const VERDICT_KINDS: readonly Verdict[] = ['good', 'poor', 'broken', 'refused'];

interface TryOn {
  index: number;
  kind: 'single' | 'outfit';
  person: string;
  /** One garment file, or two for an outfit (top first). */
  garments: WideImage[];
}

interface TryOnResult {
  index: number;
  kind: 'single' | 'outfit';
  person: string;
  garment: string;
  /** The manifest's category and style (an outfit: "top+bottom"). */
  category: string;
  style: string;
  /** What the engine's cut-out detects from the photo when asked with `auto`. */
  detected: string;
  outcome: string;
  message: string;
  ms: number;
  key: string;
  strip: string;
}

/**
 * Six garments per person: two tops, an outerwear, a bottom, a dress and (in turn) a second bottom, dress or
 * top, each category dealt round robin over its garments, so use is even (every garment at least twice
 * with 18 people) and no person gets one garment twice. Then every OUTFIT_EVERY-th person's outfit.
 */
function plan(people: WideImage[], garments: WideImage[]): TryOn[] {
  const byCategory = new Map<WideCategory, WideImage[]>(WIDE_CATEGORIES.map((c) => [c, garments.filter((g) => g.category === c)]));
  const dealt = new Map<WideCategory, number>(WIDE_CATEGORIES.map((c) => [c, 0]));
  const deal = (category: WideCategory): WideImage => {
    const list = byCategory.get(category)!;
    const k = dealt.get(category)!;
    dealt.set(category, k + 1);
    return list[k % list.length]!;
  };
  const tryOns: TryOn[] = [];
  for (const [p, person] of people.entries()) {
    const extra = (['bottom', 'dress', 'top'] as const)[p % 3]!;
    for (const category of ['top', 'outerwear', 'bottom', 'top', 'dress', extra] as const)
      tryOns.push({ index: 0, kind: 'single', person: person.file, garments: [deal(category)] });
  }
  const tops = byCategory.get('top')!;
  const bottoms = byCategory.get('bottom')!;
  for (const [p, person] of people.entries()) {
    if (p % OUTFIT_EVERY !== 0) continue;
    const top = tops[(p * 7 + 5) % tops.length]!;
    const bottom = bottoms[(p * 5 + 3) % bottoms.length]!;
    tryOns.push({ index: 0, kind: 'outfit', person: person.file, garments: [top, bottom] });
  }
  for (const [k, t] of tryOns.entries()) t.index = k + 1;
  const rare = garments.filter((g) => tryOns.filter((t) => t.kind === 'single' && t.garments.includes(g)).length < 2);
  if (rare.length) console.warn(`worn fewer than twice as a single garment: ${rare.map((g) => g.file).join(', ')}`);
  return tryOns;
}

const formatOf = (file: string): ImageFormat => (/\.png$/i.test(file) ? 'png' : /\.webp$/i.test(file) ? 'webp' : 'jpeg');
const keyOf = (t: TryOn): string => `${t.person}|${t.garments.map((g) => g.file).join('+')}`;

interface StoredVerdict {
  verdict: Verdict;
  why: string;
}

function readVerdicts(): { judgedAt: string | null; verdicts: Map<string, StoredVerdict> } {
  if (!existsSync(VERDICTS)) return { judgedAt: null, verdicts: new Map() };
  const raw = JSON.parse(readFileSync(VERDICTS, 'utf8')) as Record<string, unknown>;
  const verdicts = new Map<string, StoredVerdict>();
  for (const [key, value] of Object.entries(raw)) {
    if (key.startsWith('_')) continue;
    const v = value as StoredVerdict;
    if (!VERDICT_KINDS.includes(v.verdict)) throw new Error(`${VERDICTS}: "${key}" has verdict "${v.verdict}"`);
    verdicts.set(key, v);
  }
  return { judgedAt: typeof raw._judged_at === 'string' ? raw._judged_at : null, verdicts };
}

async function main(): Promise<void> {
  const wide = loadWide();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const workDir = join(OUT, 'work');
  mkdirSync(workDir, { recursive: true });
  const started = performance.now();
  const code = codeVersion();
  console.log(`code: ${code}`);
  const tryOns = plan(wide.people, wide.garments);
  const used = new Set(tryOns.flatMap((t) => t.garments.map((g) => g.file)));
  console.log(
    `${tryOns.filter((t) => t.kind === 'single').length} single try-ons and ${tryOns.filter((t) => t.kind === 'outfit').length} top + bottom outfits ` +
      `on ${wide.people.length} people with ${used.size} of ${wide.garments.length} garments (from ${WIDE})`,
  );

  // Each garment photo read once: its thumbnail for the strips, and the category the engine's cut-out detects
  // (the same cut-out code and models the engine runs, here with their own sessions, released before the engine loads).
  const thumbs = new Map<string, Buffer>();
  const detections = new Map<string, Detection>();
  {
    const analyzer = await PersonAnalyzer.create({ threads: 1 });
    const segmenter = await GarmentSegmenter.create({ threads: 1 });
    for (const g of wide.garments) {
      const bytes = readFileSync(join(WIDE, g.file));
      thumbs.set(g.file, await cell(bytes, CELL, CELL));
      detections.set(g.file, await detectCategory(await readRawImage(bytes), analyzer, segmenter));
    }
    await analyzer.dispose();
    await segmenter.dispose();
  }
  const detectedOf = (g: WideImage): string => {
    const d = detections.get(g.file)!;
    return d.ok ? d.category : d.code;
  };
  const detectionDone = performance.now();

  const engine = new WarpEngine({ threads: 1 });
  await engine.load();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);

  const results: TryOnResult[] = [];
  const strips: Buffer[] = [];
  for (const t of tryOns) {
    const person = wide.people.find((p) => p.file === t.person)!;
    const request: EngineRequest = {
      genId: `wide-${t.index}`,
      selfie: { path: join(WIDE, t.person), format: formatOf(t.person), width: person.width, height: person.height },
      items: t.garments.map((g) => ({ path: join(WIDE, g.file), format: formatOf(g.file), width: g.width, height: g.height })),
      categories: t.garments.map(() => 'auto' as const),
      size: 'M',
      personSize: 'M',
      fit: 'regular',
      styling: [],
      workDir,
    };
    let image: Uint8Array | null = null;
    let outcome = 'completed';
    let message = '';
    const t0 = performance.now();
    try {
      image = (await engine.run(request, { signal: new AbortController().signal, onProgress: () => {} })).image;
    } catch (error) {
      outcome = error instanceof EngineError ? error.code : 'crash';
      message = (error as Error).message;
    }
    const ms = performance.now() - t0;
    const garmentId = t.garments.map((g) => idOf(g.file)).join('+');
    const name = `${String(t.index).padStart(3, '0')}-${idOf(t.person)}-${garmentId}.png`;
    const result: TryOnResult = {
      index: t.index,
      kind: t.kind,
      person: t.person,
      garment: t.garments.map((g) => g.file).join('+'),
      category: t.garments.map((g) => g.category).join('+'),
      style: t.garments.map((g) => g.style).join('+'),
      detected: t.garments.map(detectedOf).join('+'),
      outcome,
      message,
      ms: Math.round(ms),
      key: keyOf(t),
      strip: name,
    };
    results.push(result);
    const strip = await drawStrip(t, result, image, thumbs);
    await sharp(strip).toFile(join(OUT, name));
    strips.push(strip);
    console.log(
      `${String(t.index).padStart(3)} ${idOf(t.person).slice(0, 34).padEnd(34)} ${garmentId.slice(0, 48).padEnd(48)} ${result.category.padEnd(10)} ${outcome.padEnd(20)} ${result.ms} ms`,
    );
  }
  clearInterval(sampler);
  await engine.dispose();

  const sheets = await writeSheets(strips);
  const finished = performance.now();
  writeFileSync(join(OUT, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);

  // Summary.
  console.log('');
  for (const kind of ['single', 'outfit'] as const) {
    const some = results.filter((r) => r.kind === kind);
    const byOutcome = new Map<string, number>();
    for (const r of some) byOutcome.set(r.outcome, (byOutcome.get(r.outcome) ?? 0) + 1);
    const parts = [...byOutcome].sort((a, b) => b[1] - a[1]).map(([o, n]) => `${o} ${n}`);
    console.log(`${kind === 'single' ? 'single garments' : 'top + bottom outfits'}: ${some.length} try-ons: ${parts.join(', ')}`);
    const ms = some.map((r) => r.ms);
    if (ms.length)
      console.log(
        `  ms per try-on (completed or refused): median ${median(ms).toFixed(0)}, p90 ${percentile(
          [...ms].sort((a, b) => a - b),
          90,
        ).toFixed(0)}`,
      );
  }
  const byCategory = WIDE_CATEGORIES.map((c) => {
    const some = results.filter((r) => r.kind === 'single' && r.category === c);
    return `${c} ${some.filter((r) => r.outcome === 'completed').length}/${some.length}`;
  });
  console.log(`completed per manifest category (singles): ${byCategory.join(', ')}`);
  const misread = wide.garments.filter((g) => detectedOf(g) !== g.category);
  console.log(
    `detected category (cut-out with 'auto'): ${wide.garments.length - misread.length}/${wide.garments.length} as in the manifest; ` +
      `try-ons given a garment detected otherwise: ${results.filter((r) => r.detected !== r.category).length}`,
  );
  console.log(`peak resident memory during the try-ons: ${(peakRss / 2 ** 20).toFixed(0)} MiB`);
  console.log(
    `whole run: ${((finished - started) / 1000).toFixed(1)} s (category detection and thumbnails ${((detectionDone - started) / 1000).toFixed(1)} s, ` +
      `try-ons, strips and ${sheets} sheets ${((finished - detectionDone) / 1000).toFixed(1)} s)`,
  );

  const outcomes: Record<string, number> = {};
  for (const r of results) outcomes[`${r.kind} ${r.outcome}`] = (outcomes[`${r.kind} ${r.outcome}`] ?? 0) + 1;
  const run = {
    code,
    date: new Date().toISOString(),
    wholeRunSeconds: Math.round((finished - started) / 100) / 10,
    detectionSeconds: Math.round((detectionDone - started) / 100) / 10,
    msMedian: median(results.map((r) => r.ms)),
    msP90: percentile(
      results.map((r) => r.ms).sort((a, b) => a - b),
      90,
    ),
    peakRssMiB: Math.round(peakRss / 2 ** 20),
    outcomes,
  };
  writeFileSync(join(OUT, 'run.json'), `${JSON.stringify(run, null, 1)}\n`);

  reportVerdicts(results);
  console.log(`\nstrips, sheets, results.json and verdicts.md: ${OUT}`);
}

/** The commit the engine's code comes from, and the engine files that differ from it (verdicts are judged on a version). */
function codeVersion(): string {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' }).trimEnd();
    } catch {
      return '';
    }
  };
  const head = git('rev-parse', '--short', 'HEAD').trim() || 'unknown commit';
  const dirty = git('status', '--porcelain', '--', '../server', '../models')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  return dirty.length ? `${head} with uncommitted changes to ${dirty.join(', ')}` : head;
}

async function drawStrip(t: TryOn, r: TryOnResult, image: Uint8Array | null, thumbs: Map<string, Buffer>): Promise<Buffer> {
  const failed = r.outcome !== 'completed';
  const caption = await captionBand(
    [
      `#${r.index}  ${idOf(t.person)}  ×  ${t.garments.map((g) => idOf(g.file)).join(' + ')}`,
      `${r.category} (${r.style}), detected ${r.detected}  ·  ${r.outcome}${failed ? `: ${r.message.slice(0, 60)}` : ''}  ·  ${r.ms} ms`,
    ],
    3 * CELL,
    failed,
  );
  const top = (await sharp(caption).metadata()).height!;
  let garmentCell: Buffer;
  if (t.garments.length === 1) garmentCell = thumbs.get(t.garments[0]!.file)!;
  else {
    const halves = await Promise.all(t.garments.map((g) => cell(join(WIDE, g.file), CELL / 2, CELL)));
    garmentCell = await sharp({ create: { width: CELL, height: CELL, channels: 3, background: '#808080' } })
      .composite(halves.map((input, k) => ({ input, left: (k * CELL) / 2, top: 0 })))
      .png()
      .toBuffer();
  }
  const resultCell = image ? await cell(Buffer.from(image), CELL, CELL) : await blankCell(CELL, CELL, '#400', r.outcome);
  const tiles: OverlayOptions[] = [
    { input: caption, left: 0, top: 0 },
    { input: await cell(join(WIDE, t.person), CELL, CELL), left: 0, top },
    { input: garmentCell, left: CELL, top },
    { input: resultCell, left: 2 * CELL, top },
  ];
  return sharp({ create: { width: 3 * CELL, height: top + CELL, channels: 3, background: '#000' } })
    .composite(tiles)
    .png()
    .toBuffer();
}

/** Sheets of SHEET_COLUMNS × SHEET_ROWS strips; returns how many. */
async function writeSheets(strips: Buffer[]): Promise<number> {
  const per = SHEET_COLUMNS * SHEET_ROWS;
  const { width, height } = await sharp(strips[0]!).metadata();
  const gap = 6;
  let k = 0;
  for (let first = 0; first < strips.length; first += per) {
    const some = strips.slice(first, first + per);
    const rows = Math.ceil(some.length / SHEET_COLUMNS);
    k++;
    await sharp({
      create: { width: SHEET_COLUMNS * (width! + gap) - gap, height: rows * (height! + gap) - gap, channels: 3, background: '#fff' },
    })
      .composite(
        some.map((input, n) => ({
          input,
          left: (n % SHEET_COLUMNS) * (width! + gap),
          top: Math.floor(n / SHEET_COLUMNS) * (height! + gap),
        })),
      )
      .png()
      .toFile(join(OUT, `sheet-${k}.png`));
  }
  return k;
}

/** Verdict totals for the try-ons that have one (a refusal without one is `refused`), the ones without, and verdicts.md. */
function reportVerdicts(results: TryOnResult[]): void {
  const { judgedAt, verdicts } = readVerdicts();
  const rows: string[] = ['| # | person | garment | category | outcome | verdict | why |', '| --: | --- | --- | --- | --- | --- | --- |'];
  const judged = new Map<string, TryOnResult[]>();
  const missing: TryOnResult[] = [];
  for (const r of results) {
    const stored = verdicts.get(r.key);
    const v: StoredVerdict | null =
      stored ?? (r.outcome !== 'completed' ? { verdict: 'refused', why: `${r.outcome}: ${r.message}` } : null);
    if (v) judged.set(v.verdict, [...(judged.get(v.verdict) ?? []), r]);
    else missing.push(r);
    const cat = r.detected === r.category ? r.category : `${r.category} (detected ${r.detected})`;
    const why = (v?.why ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
    rows.push(
      `| ${r.index} | ${idOf(r.person)} | ${r.garment.split('+').map(idOf).join(' + ')} | ${cat} | ${r.outcome} | ${v?.verdict ?? '—'} | ${why} |`,
    );
  }
  writeFileSync(join(OUT, 'verdicts.md'), `${rows.join('\n')}\n`);
  const total = results.length - missing.length;
  console.log(`\nverdicts (${VERDICTS}${judgedAt ? `, judged at ${judgedAt}` : ''}): ${total} of ${results.length} try-ons`);
  for (const kind of ['single', 'outfit'] as const) {
    const some = results.filter((r) => r.kind === kind && !missing.includes(r));
    if (!some.length) continue;
    const parts = VERDICT_KINDS.map((v) => {
      const n = (judged.get(v) ?? []).filter((r) => r.kind === kind).length;
      return `${v} ${n} (${((100 * n) / some.length).toFixed(0)} %)`;
    });
    console.log(`  ${kind === 'single' ? 'single garments' : 'outfits'} (${some.length}): ${parts.join(', ')}`);
  }
  const stale = [...verdicts.keys()].filter((key) => !results.some((r) => r.key === key));
  if (stale.length) console.log(`  ${stale.length} stored verdicts match no try-on of this run, e.g. ${stale[0]}`);
  if (missing.length) {
    console.log(`  no verdict yet (${missing.length}):`);
    for (const r of missing) console.log(`    #${r.index} ${r.key}`);
  }
}

if (process.argv.includes('--verdicts')) {
  // Only the verdict totals and verdicts.md again, from the last run's results.json (after editing the verdicts).
  const file = join(OUT, 'results.json');
  if (!existsSync(file)) {
    console.error(`no ${file}: run npm run bench:wide first`);
    process.exit(1);
  }
  reportVerdicts(JSON.parse(readFileSync(file, 'utf8')) as TryOnResult[]);
} else await main();
