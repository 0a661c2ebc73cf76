/**
 * The four MediaPipe models, converted from the installed packages into a
 * scratch directory (checking the cache and its invalidation), each run once
 * in onnxruntime-node on a real photo. Without ../shared the photo is a
 * generated picture and only names, shapes and finiteness are checked.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import sharp from 'sharp';
import { ensureVisionModels, readManifest, type ReadyModel } from '../../server/vision/models.ts';
import { OrtSession, type FloatTensor } from '../../server/onnx/ort.ts';

const PHOTO = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'people', 'viton_00034_00.jpg');
const HAVE_PHOTO = existsSync(PHOTO);

let outDir: string;
const ready = new Map<string, ReadyModel>();

before(async () => {
  outDir = await mkdtemp(join(tmpdir(), 'fittingroom-vision-'));
  for (const model of await ensureVisionModels({ outDir })) ready.set(model.entry.id, model);
});

after(async () => {
  await rm(outDir, { recursive: true, force: true });
});

/** The photo (or a generated stand-in) as a float NHWC tensor of size×size, letterboxed or stretched. */
async function photoTensor(size: number, fit: 'contain' | 'fill', range: [number, number]): Promise<FloatTensor> {
  // sharp composites after resizing, so the generated picture is rendered first.
  const source = HAVE_PHOTO
    ? sharp(PHOTO)
    : sharp(
        await sharp({ create: { width: 192, height: 256, channels: 3, background: { r: 200, g: 190, b: 180 } } })
          .composite([
            { input: Buffer.from('<svg width="192" height="256"><ellipse cx="96" cy="140" rx="50" ry="110" fill="#345"/></svg>') },
          ])
          .png()
          .toBuffer(),
      );
  const pixels = await source
    .removeAlpha()
    .resize(size, size, { fit, background: { r: 0, g: 0, b: 0 } })
    .raw()
    .toBuffer();
  const [lo, hi] = range;
  return { data: Float32Array.from(pixels, (v) => lo + (v / 255) * (hi - lo)), dims: [1, size, size, 3] };
}

async function runModel(id: string, input: FloatTensor): Promise<Record<string, FloatTensor>> {
  const model = ready.get(id)!;
  const session = await OrtSession.create(model.path, { name: id, threads: 1 });
  try {
    const manifestInputs = model.entry.onnx.inputs.map((i) => i.name);
    assert.deepEqual(session.inputNames, manifestInputs);
    const outputs = await session.run({ [manifestInputs[0]!]: input });
    assert.deepEqual(
      Object.entries(outputs).map(([name, t]) => [name, [...t.dims]]),
      model.entry.onnx.outputs.map((o) => [o.name, o.shape]),
    );
    for (const [name, t] of Object.entries(outputs)) assert.ok(t.data.every(Number.isFinite), `${id} ${name} has non-finite values`);
    return outputs;
  } finally {
    await session.release();
  }
}

test('all four models convert from the packages, in seconds, with fp16 weights kept (pose_landmark_full under 7 MB)', async () => {
  const manifest = await readManifest();
  assert.deepEqual(
    [...ready.keys()],
    manifest.models.map((m) => m.id),
  );
  for (const model of ready.values()) {
    assert.equal(model.converted, true);
    assert.ok(model.conversionMs < 10_000, `${model.entry.id} took ${model.conversionMs} ms`);
    assert.equal(model.entry.license, 'Apache-2.0');
  }
  assert.ok(ready.get('pose_landmark_full')!.bytes < 7_000_000);
});

test('converted models are cached by source sha256 and converter version, and converted again when the record differs', async () => {
  const again = await ensureVisionModels({ outDir, ids: ['selfie_segmentation', 'pose_landmark_lite'] });
  assert.deepEqual(
    again.map((m) => m.converted),
    [false, false],
  );
  const sidecar = join(outDir, 'selfie_segmentation.onnx.json');
  const record = JSON.parse(await readFile(sidecar, 'utf8')) as { sourceSha256: string };
  await writeFile(sidecar, JSON.stringify({ ...record, sourceSha256: '0'.repeat(64) }));
  const [redone] = await ensureVisionModels({ outDir, ids: ['selfie_segmentation'] });
  assert.equal(redone!.converted, true);
  await writeFile(join(outDir, 'pose_landmark_lite.onnx'), 'truncated');
  const [repaired] = await ensureVisionModels({ outDir, ids: ['pose_landmark_lite'] });
  assert.equal(repaired!.converted, true);
});

test('a feed that does not match the model is refused before running', async () => {
  const session = await OrtSession.create(ready.get('selfie_segmentation')!.path, { log: () => {} });
  try {
    await assert.rejects(
      session.run({ image: { data: new Float32Array(3), dims: [1, 1, 1, 3] } }),
      /do not match the model's inputs \[input_1\]/,
    );
    await assert.rejects(session.run({ input_1: { data: new Float32Array(3), dims: [1, 1, 1, 3] } }), /does not fit input input_1/);
  } finally {
    await session.release();
  }
});

test('pose_detection finds the person (a score above 0.5)', async () => {
  const out = await runModel('pose_detection', await photoTensor(224, 'contain', [-1, 1]));
  const best = Math.max(...out.Identity_1!.data);
  if (HAVE_PHOTO) assert.ok(1 / (1 + Math.exp(-best)) > 0.5, `best detection logit ${best}`);
});

for (const id of ['pose_landmark_lite', 'pose_landmark_full']) {
  test(`${id} sees a pose (flag above 0.5) on a centred person crop`, async () => {
    const out = await runModel(id, await photoTensor(256, 'contain', [0, 1]));
    const flag = out.Identity_1!.data[0]!;
    assert.ok(flag >= 0 && flag <= 1);
    if (HAVE_PHOTO) assert.ok(flag > 0.5, `pose flag ${flag}`);
  });
}

test('selfie_segmentation covers the person: high in a central box, low in the top corners', async () => {
  const out = await runModel('selfie_segmentation', await photoTensor(256, 'fill', [0, 1]));
  const mask = out.activation_10!.data;
  const mean = (x0: number, y0: number, x1: number, y1: number): number => {
    let sum = 0;
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) sum += mask[y * 256 + x]!;
    return sum / ((x1 - x0) * (y1 - y0));
  };
  const centre = mean(96, 96, 160, 192);
  const corners = Math.max(mean(0, 0, 32, 32), mean(224, 0, 256, 32));
  if (HAVE_PHOTO) {
    assert.ok(centre > 0.5, `centre ${centre}`);
    assert.ok(corners < 0.2, `corners ${corners}`);
  }
});
