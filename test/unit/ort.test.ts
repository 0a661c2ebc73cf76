/** server/onnx/ort.ts: provider fallback, feed checks, release. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { convertGraph } from '../../server/vision/tflite-to-onnx/convert.ts';
import { OrtSession, supportedProviders } from '../../server/onnx/ort.ts';
import { GraphSketch } from '../helpers/tflite-graph.ts';

function reluModel(): Uint8Array {
  const s = new GraphSketch();
  s.output(s.op('RELU', [s.input([1, 4])], [1, 4]));
  return convertGraph(s.graph, { name: 'relu' }).onnx;
}

test('a provider that cannot load falls back to CPU, saying so', async () => {
  assert.ok(supportedProviders().includes('cpu'));
  const logged: string[] = [];
  // Without the CUDA libraries (never installed in CI), CUDA fails to load.
  const session = await OrtSession.create(reluModel(), { name: 'relu', providers: ['cuda'], log: (m) => logged.push(m) });
  try {
    if (session.provider === 'cpu') assert.match(logged.join('\n'), /relu: execution provider cuda unavailable/);
    const out = await session.run({ x0: { data: Float32Array.of(-1, 2, -3, 4), dims: [1, 4] } });
    assert.deepEqual([...out.x1!.data], [0, 2, 0, 4]);
  } finally {
    await session.release();
  }
});

test('feeds are checked by name and shape; a released session refuses to run', async () => {
  const session = await OrtSession.create(reluModel(), { name: 'relu' });
  assert.deepEqual(session.inputNames, ['x0']);
  assert.deepEqual(session.inputShape('x0'), [1, 4]);
  await assert.rejects(session.run({}), /relu: feeds \[\] do not match the model's inputs \[x0\]/);
  await assert.rejects(session.run({ x0: { data: new Float32Array(5), dims: [1, 5] } }), /does not fit input x0 \[1,4\]/);
  await assert.rejects(session.run({ x0: { data: new Float32Array(3), dims: [1, 4] } }), /3 values/);
  await session.release();
  await session.release();
  await assert.rejects(session.run({ x0: { data: new Float32Array(4), dims: [1, 4] } }), /relu: session released/);
});
