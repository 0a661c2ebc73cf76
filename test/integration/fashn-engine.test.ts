/**
 * The FASHN VTON engine through the HTTP API, with a tiny configuration of
 * the real architecture and random weights written by the test: not ready
 * (with the reason) while the weights are absent or wrong; ready on CPU with
 * a measured time once they are; and, when the fixture photos in ../shared
 * are present, a try-on end to end at the photo's own size, the same image
 * for the same seed, the face and the background untouched.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import sharp from 'sharp';
import type { EngineDescription, EngineSpec } from '../../server/engines/types.ts';
import type { FashnEngineOptions } from '../../server/engines/fashn/engine.ts';
import { readRawImage, PersonAnalyzer } from '../../server/vision/person.ts';
import { REGION } from '../../server/vision/types.ts';
import { startTestAppliance, type TestAppliance } from '../helpers/appliance.ts';
import { TINY, writeRandomModel } from '../helpers/fashn-tiny.ts';

const ENGINE = resolve(import.meta.dirname, '../../server/engines/fashn/engine.ts');
const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const PERSON = join(FIXTURES, 'people', 'viton_00034_00.jpg');
const GARMENT = join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg');
const HAVE_PHOTOS = existsSync(PERSON) && existsSync(GARMENT);

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fashn-engine-'));
  dirs.push(dir);
  return dir;
}

function spec(dir: string): EngineSpec {
  const options: FashnEngineOptions = { dir, config: TINY, steps: 2, compute: 'float32', providers: ['cpu'], threads: 1 };
  return { module: ENGINE, options };
}

async function engines(app: TestAppliance): Promise<EngineDescription[]> {
  const response = await app.call('GET', '/api/v1/engines');
  assert.equal(response.status, 200);
  const body = (await response.json()) as { engines?: EngineDescription[] } | EngineDescription[];
  return Array.isArray(body) ? body : (body.engines ?? []);
}

test('without weights the engine is listed as not ready, with the reason and where to get them', async (t) => {
  const app = await startTestAppliance(t, { engines: [spec(scratch())] });
  const [fashn] = await engines(app);
  assert.equal(fashn?.id, 'fashn-vton');
  assert.equal(fashn?.ready, false);
  assert.match(
    fashn?.reason ?? '',
    /model\.safetensors is missing\. Download model\.safetensors from https:\/\/huggingface\.co\/fashn-ai\/fashn-vton-1\.5/,
  );
});

test('weights of another shape keep it not ready, naming the tensors', async (t) => {
  const dir = scratch();
  writeRandomModel(join(dir, 'model.safetensors'), { ...TINY, doubleBlocks: 0 }, 2);
  const app = await startTestAppliance(t, { engines: [spec(dir)] });
  const [fashn] = await engines(app);
  assert.equal(fashn?.ready, false);
  assert.match(fashn?.reason ?? '', /tensors missing \(double_blocks\.0\.img_mod\.lin\.weight \[192,32\]/);
});

test('with weights it is ready on CPU with a measured typical time, and a try-on goes end to end', async (t) => {
  const dir = scratch();
  writeRandomModel(join(dir, 'model.safetensors'), TINY, 3, 'BF16');
  const app = await startTestAppliance(t, { engines: [spec(dir)] });
  const [fashn] = await engines(app);
  assert.equal(fashn?.ready, true, fashn?.reason);
  assert.equal(fashn?.device, 'cpu');
  assert.deepEqual(fashn?.resolution, { width: TINY.width, height: TINY.height });
  assert.ok((fashn?.typicalSeconds ?? 0) >= 1);
  assert.ok(existsSync(join(dir, 'model.float32-fused.onnx.data')), 'the built model is cached next to the weights');

  if (!HAVE_PHOTOS) {
    t.diagnostic('../shared/fixtures is absent: the try-on through the API is skipped');
    return;
  }
  const selfie = readFileSync(PERSON);
  const body = {
    selfie: selfie.toString('base64'),
    items: [readFileSync(GARMENT).toString('base64')],
    size: 'M',
    categories: ['top'],
    seed: 7,
    outputFormat: 'png',
  };
  const results: Buffer[] = [];
  let stored = '';
  for (let i = 0; i < 2; i++) {
    const accepted = (await (await app.call('POST', '/api/v1/try-on', { body })).json()) as { genId: string };
    const status = (await (await app.call('GET', `/api/v1/try-on/${accepted.genId}?wait=120`)).json()) as {
      status: string;
      error?: unknown;
    };
    assert.equal(status.status, 'complete', JSON.stringify(status));
    const folder = join(app.dataDir, 'images', accepted.genId);
    stored = join(folder, readdirSync(folder).find((name) => name.startsWith('selfie.')) ?? 'missing');
    results.push(Buffer.from(await (await app.call('GET', `/api/v1/try-on/${accepted.genId}/image`)).arrayBuffer()));
  }
  const [first, second] = await Promise.all(results.map((png) => sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true })));
  // The engine saw the appliance's normalized copy of the photo (re-encoded, metadata stripped).
  const original = await readRawImage(stored);
  assert.deepEqual([first!.info.width, first!.info.height], [original.width, original.height], 'the photo keeps its own size');
  assert.ok(first!.data.equals(second!.data), 'the same seed gives the same image');

  // The face and the background far from the body keep their pixels exactly; the torso changed.
  const analyzer = await PersonAnalyzer.create();
  const person = await analyzer.analyze(original);
  await analyzer.dispose();
  const counts = { head: 0, headSame: 0, torso: 0, torsoChanged: 0 };
  person.layout.labels.forEach((label, i) => {
    const same = [0, 1, 2].every((c) => first!.data[3 * i + c] === original.data[3 * i + c]);
    if (label === REGION.head) {
      counts.head++;
      if (same) counts.headSame++;
    } else if (label === REGION.torso) {
      counts.torso++;
      if (!same) counts.torsoChanged++;
    }
  });
  assert.ok(counts.head > 0 && counts.headSame === counts.head, `head pixels untouched: ${counts.headSame}/${counts.head}`);
  assert.ok(counts.torsoChanged > 0.9 * counts.torso, `torso pixels generated: ${counts.torsoChanged}/${counts.torso}`);
  const corner = [0, 1, 2].every((c) => first!.data[c] === original.data[c]);
  assert.ok(corner, 'the top-left corner (background) is untouched');
});
