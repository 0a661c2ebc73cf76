/**
 * The FASHN engine chooses its pose source: DWPose when both of its ONNX
 * files are in the DWPose folder (checked by shape at load, before the model is
 * built), MediaPipe's landmarks otherwise; one file without the other keeps
 * the engine not ready with the reason. With the fixture photos, the same
 * seed gives another image with DWPose's poses than with MediaPipe's: the
 * DWPose maps reach the model.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import sharp from 'sharp';
import { createEngine, type FashnEngineOptions } from '../../server/engines/fashn/engine.ts';
import type { Engine, EngineRequest } from '../../server/engines/types.ts';
import { detectorOutput, simccOutputs, writeTinyDwPose } from '../helpers/dwpose-tiny.ts';
import { TINY, writeRandomModel } from '../helpers/fashn-tiny.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const PERSON = join(FIXTURES, 'people', 'viton_00034_00.jpg');
const GARMENT = join(FIXTURES, 'garments', 'upper_viton_00055_00.jpg');
const HAVE_PHOTOS = existsSync(PERSON) && existsSync(GARMENT);

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fashn-dwpose-engine-'));
  dirs.push(dir);
  return dir;
}

/** No detection (the whole photo is the box) and a body whose shoulders, arms and hips are visible. */
async function standInDwPose(dir: string): Promise<void> {
  const { x, y } = simccOutputs([
    { k: 0, x: 288, y: 150, score: 0.9 }, // nose
    { k: 5, x: 380, y: 250, score: 0.9 }, // left shoulder
    { k: 6, x: 196, y: 250, score: 0.9 }, // right shoulder
    { k: 7, x: 420, y: 380, score: 0.9 },
    { k: 8, x: 156, y: 380, score: 0.9 },
    { k: 11, x: 350, y: 450, score: 0.9 },
    { k: 12, x: 226, y: 450, score: 0.9 },
  ]);
  await writeTinyDwPose(dir, { detector: detectorOutput([]), simccX: x, simccY: y });
}

test('the pose source: DWPose when its files are present, MediaPipe when absent, not ready when half there or refused at load', async () => {
  const weights = scratch();
  writeRandomModel(join(weights, 'model.safetensors'), TINY, 3);
  const base: FashnEngineOptions = { dir: weights, config: TINY, steps: 2, compute: 'float32', providers: ['cpu'], threads: 1 };

  const absent = await createEngine({ ...base, dwposeDir: scratch() });
  assert.equal(absent.describe().ready, true);
  assert.match(absent.describe().name, /poses: MediaPipe/);

  const present = scratch();
  await standInDwPose(present);
  const dwpose = await createEngine({ ...base, dwposeDir: present });
  assert.equal(dwpose.describe().ready, true);
  assert.match(dwpose.describe().name, /poses: DWPose/);

  const half = scratch();
  await standInDwPose(half);
  rmSync(join(half, 'yolox_l.onnx'));
  const halfEngine = await createEngine({ ...base, dwposeDir: half });
  assert.equal(halfEngine.describe().ready, false);
  assert.match(
    halfEngine.describe().reason ?? '',
    /DWPose: yolox_l\.onnx is missing in .*remove dw-ll_ucoco_384\.onnx to use MediaPipe poses/,
  );

  const wrong = scratch();
  const { x, y } = simccOutputs([]);
  // Named as no export names it, which is fine; 84 columns (no objectness) is not.
  await writeTinyDwPose(wrong, { detector: new Float32Array(8400 * 85), simccX: x, simccY: y }, [{ name: 'boxes', dims: [1, 8400, 84] }]);
  const wrongEngine = await createEngine({ ...base, dir: scratch(), dwposeDir: wrong });
  assert.equal(wrongEngine.describe().ready, false, 'no weights in this folder');
  const refused = await createEngine({ ...base, dwposeDir: wrong });
  await assert.rejects(
    refused.load(),
    /yolox_l\.onnx has inputs pixels \[1,3,640,640\] and outputs boxes \[1,8400,84\]; expected one input \[1,3,640,640\] and one output \[1,8400,85\]/,
  );
});

test(
  'with the fixture photos, DWPose poses reach the model: the same seed gives another image',
  { skip: !HAVE_PHOTOS && 'no fixture photos' },
  async () => {
    const weights = scratch();
    writeRandomModel(join(weights, 'model.safetensors'), TINY, 3);
    const base: FashnEngineOptions = { dir: weights, config: TINY, steps: 2, compute: 'float32', providers: ['cpu'], threads: 1 };
    const present = scratch();
    await standInDwPose(present);
    const [person, garment] = await Promise.all([sharp(PERSON).metadata(), sharp(GARMENT).metadata()]);
    const request: EngineRequest = {
      genId: 'gen_dwpose',
      selfie: { path: PERSON, format: 'jpeg', width: person.width!, height: person.height! },
      items: [{ path: GARMENT, format: 'jpeg', width: garment.width!, height: garment.height! }],
      categories: ['top'],
      size: 'M',
      personSize: 'M',
      fit: 'regular',
      styling: [],
      seed: 11,
      workDir: scratch(),
    };
    const run = async (engine: Engine): Promise<Buffer> => {
      await engine.load();
      try {
        const result = await engine.run(request, { signal: new AbortController().signal, onProgress: () => {} });
        return (await sharp(result.image).raw().toBuffer({ resolveWithObject: true })).data;
      } finally {
        await engine.dispose?.();
      }
    };
    const withMediaPipe = await run(await createEngine({ ...base, dwposeDir: scratch() }));
    const withDwPose = await run(await createEngine({ ...base, dwposeDir: present }));
    assert.equal(withDwPose.length, withMediaPipe.length, 'the same size');
    assert.ok(!withDwPose.equals(withMediaPipe), 'the pose maps differ, so the generated pixels do');
  },
);
