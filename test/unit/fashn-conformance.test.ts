/**
 * The FASHN VTON forward pass against the PyTorch reference's own outputs
 * (shared/reference/fashn-goldens): the tiny golden checkpoint built by our
 * graph builder and run in ONNX Runtime on CPU gives the reference's v_c and
 * v_u (the classifier-free guidance pair) and a plain batch of two rows, in
 * float32 to within float32 rounding and in float16 to within half precision,
 * with fused and plain attention. Bounds are those the goldens' README
 * suggests, about ten times what was measured.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { AttentionKind } from '../../server/engines/fashn/blocks.ts';
import { sessionDenoiser } from '../../server/engines/fashn/denoiser.ts';
import type { ComputeType } from '../../server/onnx/graph.ts';
import type { FloatTensor } from '../../server/onnx/ort.ts';
import {
  describeDiscrepancy,
  discrepancy,
  goldensMissing,
  loadGoldens,
  openGoldenModel,
  type Discrepancy,
  type GoldenModel,
  type Goldens,
} from '../helpers/fashn-goldens.ts';

const FLOAT32 = { relL2: 1e-5, maxAbs: 2e-5 };
const FLOAT16 = { relL2: 2e-3, maxAbs: 2e-2 };

const goldens: Goldens | null = goldensMissing ? null : loadGoldens();
const opened: GoldenModel[] = [];
after(() => Promise.all(opened.map((model) => model.release())));

async function model(compute: ComputeType, attention: AttentionKind): Promise<GoldenModel> {
  const built = await openGoldenModel(goldens!.config, compute, attention);
  opened.push(built);
  return built;
}

function within(found: Discrepancy, bound: { relL2: number; maxAbs: number }, what: string): void {
  assert.ok(found.relL2 <= bound.relL2 && found.maxAbs <= bound.maxAbs, `${what}: ${describeDiscrepancy(found)}`);
}

/** Two rows of one image each, the conditions repeated (README section 3, `batch`). */
function repeated(data: Float32Array, rows: number): Float32Array {
  const out = new Float32Array(data.length * rows);
  for (let r = 0; r < rows; r++) out.set(data, r * data.length);
  return out;
}

function batchFeeds(g: Goldens): Record<string, FloatTensor> {
  const { height: H, width: W, channels: C, classes } = g.config;
  const { categories } = g.index.forward.batch;
  const rows = categories.length;
  const category = new Float32Array(rows * (classes + 1));
  categories.forEach((label, row) => (category[row * (classes + 1) + label] = 1));
  const image = (name: string, channels: number): FloatTensor => ({ data: repeated(g.f32(name), rows), dims: [rows, channels, H, W] });
  return {
    x: { data: g.f32('batch_x'), dims: [rows, C, H, W] },
    t: { data: g.f32('batch_t'), dims: [rows] },
    agnostic: image('agnostic', C),
    garment: image('garment', C),
    person_pose: image('person_pose', 1),
    garment_pose: image('garment_pose', 1),
    category: { data: category, dims: [rows, classes + 1] },
  };
}

/** v_c, v_u and batch_v from one build, each compared with the reference's. */
async function forwardDiscrepancies(compute: ComputeType, attention: AttentionKind): Promise<Record<string, Discrepancy>> {
  const g = goldens!;
  const { session } = await model(compute, attention);
  const t = g.f32('t')[0]!;
  assert.equal(t, Math.fround(g.index.forward.cfg.t));
  const pair = await sessionDenoiser(session, g.config, g.conditions())(g.f32('x'), t, true);
  const batch = await session.run(batchFeeds(g));
  return {
    v_c: discrepancy(pair.conditional, g.f32('v_c')),
    v_u: discrepancy(pair.unconditional!, g.f32('v_u')),
    batch_v: discrepancy(batch.velocity!.data, g.f32('batch_v')),
  };
}

for (const attention of ['fused', 'plain'] as const) {
  test(`float32, ${attention} attention: v_c, v_u and batch_v are the reference's`, { skip: goldensMissing }, async (t) => {
    const found = await forwardDiscrepancies('float32', attention);
    for (const [name, d] of Object.entries(found)) {
      t.diagnostic(`${name}: ${describeDiscrepancy(d)}`);
      within(d, FLOAT32, name);
    }
  });

  test(`float16, ${attention} attention: v_c, v_u and batch_v within half precision`, { skip: goldensMissing }, async (t) => {
    const found = await forwardDiscrepancies('float16', attention);
    for (const [name, d] of Object.entries(found)) {
      t.diagnostic(`${name}: ${describeDiscrepancy(d)}`);
      within(d, FLOAT16, name);
      assert.ok(d.maxAbs > 0, `${name}: the float16 build really computes in half precision`);
    }
  });
}

test('the golden inputs are the ones the README describes', { skip: goldensMissing }, () => {
  const g = goldens!;
  const { height: H, width: W } = g.config;
  assert.equal(g.f32('x').length, 3 * H * W);
  assert.deepEqual([...g.f32('batch_t')], g.index.forward.batch.t.map(Math.fround));
  const agnostic = g.f32('agnostic');
  // Section 3: 18 rows of padding top and bottom, −1 after normalisation.
  assert.ok(agnostic.subarray(0, 18 * W).every((v) => v === -1));
  assert.ok(agnostic.some((v) => v > -1));
});
