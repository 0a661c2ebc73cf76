/**
 * Times the stages of the submit handler (server/api/routes/try-on.ts) one by
 * one, in this process, with the server's own functions: body parse,
 * validation, base64 decode, header check, sharp re-encode, durable image
 * writes and the durable state commit (at several state sizes, because the
 * whole state document is rewritten on every commit). Also times a few
 * cheaper re-encode variants, as evidence for the suggested fixes.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { checkSubmission } from '../../server/tryons/validate.ts';
import { grantTrial } from '../../server/credits/ledger.ts';
import { checkImage, decodeImageField, DEFAULT_IMAGE_LIMITS, normalizeImage } from '../../server/images/index.ts';
import { removeGenerationImages, storeImage } from '../../server/images/files.ts';
import { createGeneration } from '../../server/jobs/generations.ts';
import { createKey } from '../../server/keys/api-keys.ts';
import { Store } from '../../server/store/db.ts';
import { newId } from '../../server/kernel/ids.ts';
import type { StoredImage } from '../../server/store/schema.ts';
import { median } from './stats.ts';

/** One timed stage: the median and p90 over `n` runs, in milliseconds. */
export interface StageTiming {
  stage: string;
  n: number;
  medianMs: number;
  p90Ms: number;
  note?: string;
}

async function timeIt(n: number, fn: () => unknown): Promise<{ medianMs: number; p90Ms: number; n: number }> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 100) / 100;
  return { n, medianMs: round(median(samples)), p90Ms: round(samples[Math.ceil(samples.length * 0.9) - 1]!) };
}

/** Per-stage timings of one submit whose JSON body is `body`. */
export async function profileSubmitStages(body: Buffer, options: { runs: number; stateSizes: number[] }): Promise<StageTiming[]> {
  const { runs } = options;
  const limits = DEFAULT_IMAGE_LIMITS;
  const rows: StageTiming[] = [];
  const add = (stage: string, timing: { medianMs: number; p90Ms: number; n: number }, note?: string) =>
    rows.push({ stage, ...timing, ...(note ? { note } : {}) });

  add(
    'body: utf8 text + JSON.parse (express.json)',
    await timeIt(runs, () => JSON.parse(body.toString('utf8'))),
    `${(body.length / 1e6).toFixed(2)} MB body`,
  );
  const parsed = JSON.parse(body.toString('utf8')) as { selfie: string; items: string[] };
  add('checkSubmission (field validation)', await timeIt(runs, () => checkSubmission(parsed)));
  const fields = [parsed.selfie, ...parsed.items];
  add(
    'decodeImageField ×2 (regex, base64, sha256)',
    await timeIt(runs, () => fields.map((value, i) => decodeImageField(value, `f${i}`, limits))),
  );
  const decoded = fields.map((value, i) => decodeImageField(value, `f${i}`, limits));
  add('  of which sha256 ×2', await timeIt(runs, () => decoded.map((image) => createHash('sha256').update(image.bytes).digest('hex'))));
  add(
    '  of which base64 regex test ×2',
    await timeIt(runs, () => fields.map((value) => /^[A-Za-z0-9+/]*={0,2}$/.test(value))),
    'anchored /^[A-Za-z0-9+/]*={0,2}$/',
  );
  add(
    '  what-if: negated-class test ×2',
    await timeIt(runs, () => fields.map((value) => !/[^A-Za-z0-9+/=]/.test(value) && !/=[^=]/.test(value.slice(value.indexOf('='))))),
    '/[^A-Za-z0-9+/=]/ + padding position',
  );
  add('checkImage ×2 (header probe)', await timeIt(runs, () => decoded.map((image) => checkImage(image, limits))));
  const probes = decoded.map((image) => checkImage(image, limits));
  add(
    'normalizeImage ×2 in parallel (as the handler)',
    await timeIt(runs, () => Promise.all(decoded.map((image, i) => normalizeImage(image, probes[i]!, limits)))),
    `sharp.concurrency()=${sharp.concurrency()}`,
  );
  add('  normalizeImage selfie alone', await timeIt(runs, () => normalizeImage(decoded[0]!, probes[0]!, limits)));
  add('  sharp decode only (selfie → raw)', await timeIt(runs, () => sharp(decoded[0]!.bytes).raw().toBuffer()));
  const withoutHuffmanPass = (bytes: Buffer) =>
    sharp(bytes, { limitInputPixels: limits.maxPixels, failOn: 'warning', pages: 1, page: 0 })
      .rotate()
      .jpeg({ quality: 92, mozjpeg: false, optimiseCoding: false })
      .toBuffer();
  add(
    '  what-if: same, optimiseCoding off (selfie)',
    await timeIt(runs, () => withoutHuffmanPass(decoded[0]!.bytes)),
    'sharp defaults optimiseCoding to true',
  );
  add(
    '  what-if: ×2 in parallel, optimiseCoding off',
    await timeIt(runs, () => Promise.all(decoded.map((image) => withoutHuffmanPass(image.bytes)))),
  );
  const normalized = await Promise.all(decoded.map((image, i) => normalizeImage(image, probes[i]!, limits)));

  const dataDir = await mkdtemp(join(tmpdir(), 'fittingroom-stages-'));
  const store = await Store.open(dataDir);
  try {
    const writeOne = async () => {
      const genId = newId('gen');
      await Promise.all(normalized.map((image, i) => storeImage(dataDir, genId, i === 0 ? 'selfie' : `item-${i - 1}`, image)));
      return genId;
    };
    const written: string[] = [];
    add(
      'storeImage ×2 in parallel (mkdir, write, fsync, rename, fsync dir)',
      await timeIt(runs, async () => written.push(await writeOne())),
      `${normalized.map((image) => (image.bytes.length / 1e6).toFixed(2)).join(' + ')} MB`,
    );
    await Promise.all(written.map((id) => removeGenerationImages(dataDir, id)));

    const keyId = await store.mutate((state) => {
      const now = new Date();
      state.installation = { id: newId('inst'), createdAt: now.toISOString() };
      grantTrial(state, now, 10_000_000, 30);
      return createKey(state, 'bench', 'admin', now).record.id;
    });
    const submission = checkSubmission(parsed);
    const inputs: { selfie: StoredImage; items: StoredImage[] } = {
      selfie: { file: 'images/gen_X/selfie.jpg', format: 'jpeg', width: 1536, height: 2048 },
      items: [{ file: 'images/gen_X/item-0.jpg', format: 'jpeg', width: 1536, height: 2048 }],
    };
    const create = (state: Parameters<typeof createGeneration>[0]) =>
      createGeneration(
        state,
        { id: newId('gen'), keyId, engine: 'test-compose', params: submission.params, inputs, retentionDays: 7 },
        new Date(),
      );
    let count = 0;
    for (const size of [...options.stateSizes].sort((a, b) => a - b)) {
      if (size > count) {
        await store.mutate((state) => {
          for (; count < size; count++) create(state);
        });
      }
      const timing = await timeIt(runs, () => store.mutate(create));
      count += runs + 1;
      const bytes = (await stat(join(dataDir, 'state.json'))).size;
      add(`store.mutate(createGeneration) at ${size} generations`, timing, `state.json ${(bytes / 1e6).toFixed(2)} MB`);
      const text = JSON.stringify(store.state);
      add(
        `  of which JSON.stringify at ${size} generations`,
        await timeIt(runs, () => JSON.stringify(store.state)),
        `${(text.length / 1e6).toFixed(2)} MB`,
      );
    }
  } finally {
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return rows;
}
