/**
 * PRELU (MediaPipe's face landmark model uses it after every convolution):
 * converted, run in onnxruntime-node, and compared with NHWC reference
 * arithmetic, for the alpha layouts TFLite allows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floatToHalf, halfToFloat } from '../../server/vision/tflite-to-onnx/constants.ts';
import { GraphSketch, randoms, runSketch, seeded } from '../helpers/tflite-graph.ts';

const random = seeded(20251123);
const roundHalf = (a: Float32Array): Float32Array => a.map((v) => halfToFloat(floatToHalf(v)));
const prelu = (v: number, a: number): number => (v >= 0 ? v : a * v);

function maxDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

test('PRELU on an NHWC activation: fp16 alpha [1,1,C] and [C] (per channel), and a scalar-like [1]', async () => {
  const [h, w, c] = [3, 4, 5];
  const x = randoms(h * w * c, random);
  const alpha = roundHalf(randoms(c, random));
  for (const shape of [[1, 1, c], [c], [1, 1, 1, c]]) {
    const s = new GraphSketch();
    s.output(s.op('PRELU', [s.input([1, h, w, c]), s.half(shape, alpha)], [1, h, w, c]));
    const { data, dims } = await runSketch(s, [x]);
    assert.deepEqual(dims, [1, h, w, c]);
    const worst = maxDiff(
      data,
      x.map((v, i) => prelu(v, alpha[i % c]!)),
    );
    assert.ok(worst <= 1e-6, `alpha ${JSON.stringify(shape)}: max abs diff ${worst}`);
  }
  const s = new GraphSketch();
  s.output(s.op('PRELU', [s.input([1, h, w, c]), s.float([1], Float32Array.of(0.25))], [1, h, w, c]));
  const { data } = await runSketch(s, [x]);
  assert.ok(
    maxDiff(
      data,
      x.map((v) => prelu(v, 0.25)),
    ) <= 1e-6,
  );
});

test('PRELU on a rank-2 activation keeps its layout', async () => {
  const x = randoms(2 * 6, random);
  const alpha = randoms(6, random);
  const s = new GraphSketch();
  s.output(s.op('PRELU', [s.input([2, 6]), s.float([6], alpha)], [2, 6]));
  const { data } = await runSketch(s, [x]);
  assert.ok(
    maxDiff(
      data,
      x.map((v, i) => prelu(v, alpha[i % 6]!)),
    ) <= 1e-6,
  );
});
