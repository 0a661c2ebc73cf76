/**
 * Each TFLite op the converter supports, on tiny hand-built graphs: converted,
 * run in onnxruntime-node, and compared with plain NHWC reference arithmetic.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { floatToHalf, halfToFloat } from '../../server/vision/tflite-to-onnx/constants.ts';
import { convertGraph } from '../../server/vision/tflite-to-onnx/convert.ts';
import type { Padding } from '../../server/vision/tflite-to-onnx/tflite-model.ts';
import { GraphSketch, randoms, runSketch, seeded } from '../helpers/tflite-graph.ts';

const TOLERANCE = 1e-4;
const random = seeded(20251121);
const roundHalf = (a: Float32Array): Float32Array => a.map((v) => halfToFloat(floatToHalf(v)));

function assertClose(actual: Float32Array, expected: Float32Array, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  assert.ok(worst <= TOLERANCE, `${what}: max abs diff ${worst}`);
}

/** TFLite output size and leading padding for one spatial axis. */
function axis(size: number, k: number, s: number, d: number, padding: Padding): { out: number; before: number } {
  const eff = (k - 1) * d + 1;
  const out = padding === 'SAME' ? Math.ceil(size / s) : Math.ceil((size - eff + 1) / s);
  const total = padding === 'SAME' ? Math.max((out - 1) * s + eff - size, 0) : 0;
  return { out, before: Math.floor(total / 2) };
}

const relu6 = (v: number): number => Math.min(Math.max(v, 0), 6);

interface ConvCase {
  h: number;
  w: number;
  c: number;
  o: number;
  k: number;
  stride: number;
  dilation: number;
  padding: Padding;
}

/** Reference CONV_2D (filter OHWI) or DEPTHWISE_CONV_2D (filter [1,kh,kw,C·M]); N = 1. */
function convReference(x: Float32Array, f: Float32Array, bias: Float32Array, p: ConvCase, depthwise: boolean): Float32Array {
  const ay = axis(p.h, p.k, p.stride, p.dilation, p.padding);
  const ax = axis(p.w, p.k, p.stride, p.dilation, p.padding);
  const out = new Float32Array(ay.out * ax.out * p.o);
  const mult = p.o / p.c;
  for (let oy = 0; oy < ay.out; oy++)
    for (let ox = 0; ox < ax.out; ox++)
      for (let o = 0; o < p.o; o++) {
        let sum = bias[o]!;
        for (let ky = 0; ky < p.k; ky++)
          for (let kx = 0; kx < p.k; kx++) {
            const iy = oy * p.stride - ay.before + ky * p.dilation;
            const ix = ox * p.stride - ax.before + kx * p.dilation;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
            if (depthwise) {
              const ci = Math.floor(o / mult);
              sum += x[(iy * p.w + ix) * p.c + ci]! * f[(ky * p.k + kx) * p.o + o]!;
            } else {
              for (let i = 0; i < p.c; i++) sum += x[(iy * p.w + ix) * p.c + i]! * f[((o * p.k + ky) * p.k + kx) * p.c + i]!;
            }
          }
        out[(oy * ax.out + ox) * p.o + o] = sum;
      }
  return out;
}

async function checkConv(p: ConvCase, depthwise: boolean, act: 'NONE' | 'RELU6'): Promise<void> {
  const x = randoms(p.h * p.w * p.c, random);
  const filterShape = depthwise ? [1, p.k, p.k, p.o] : [p.o, p.k, p.k, p.c];
  const f = roundHalf(
    randoms(
      filterShape.reduce((a, b) => a * b),
      random,
    ),
  );
  const bias = roundHalf(randoms(p.o, random));
  const oh = axis(p.h, p.k, p.stride, p.dilation, p.padding).out;
  const ow = axis(p.w, p.k, p.stride, p.dilation, p.padding).out;
  const s = new GraphSketch();
  const input = s.input([1, p.h, p.w, p.c]);
  const options = {
    padding: p.padding,
    strideH: p.stride,
    strideW: p.stride,
    dilationH: p.dilation,
    dilationW: p.dilation,
    activation: act,
    ...(depthwise ? { depthMultiplier: p.o / p.c } : {}),
  };
  const op = depthwise ? 'DEPTHWISE_CONV_2D' : 'CONV_2D';
  s.output(s.op(op, [input, s.half(filterShape, f), s.half([p.o], bias)], [1, oh, ow, p.o], options));
  const { data, dims } = await runSketch(s, [x]);
  assert.deepEqual(dims, [1, oh, ow, p.o]);
  let expected = convReference(x, f, bias, p, depthwise);
  if (act === 'RELU6') expected = expected.map(relu6);
  assertClose(data, expected, `${op} ${JSON.stringify(p)} ${act}`);
}

test('CONV_2D: SAME and VALID padding, strides 1 and 2, dilation, fp16 weights and bias, fused RELU6', async () => {
  await checkConv({ h: 7, w: 6, c: 3, o: 4, k: 3, stride: 1, dilation: 1, padding: 'SAME' }, false, 'RELU6');
  await checkConv({ h: 8, w: 8, c: 2, o: 3, k: 3, stride: 2, dilation: 1, padding: 'SAME' }, false, 'NONE');
  await checkConv({ h: 9, w: 7, c: 2, o: 2, k: 3, stride: 2, dilation: 1, padding: 'VALID' }, false, 'NONE');
  await checkConv({ h: 8, w: 8, c: 2, o: 2, k: 3, stride: 1, dilation: 2, padding: 'SAME' }, false, 'NONE');
  await checkConv({ h: 5, w: 5, c: 4, o: 6, k: 1, stride: 1, dilation: 1, padding: 'VALID' }, false, 'RELU6');
});

test('DEPTHWISE_CONV_2D: SAME and VALID, stride 2, depth multiplier 2', async () => {
  await checkConv({ h: 6, w: 7, c: 4, o: 4, k: 3, stride: 1, dilation: 1, padding: 'SAME' }, true, 'RELU6');
  await checkConv({ h: 8, w: 8, c: 3, o: 3, k: 5, stride: 2, dilation: 1, padding: 'SAME' }, true, 'NONE');
  await checkConv({ h: 7, w: 7, c: 2, o: 4, k: 3, stride: 1, dilation: 1, padding: 'VALID' }, true, 'NONE');
});

/** Reference MAX_POOL_2D / AVERAGE_POOL_2D (the average counts only real pixels, as TFLite does). */
function poolReference(x: Float32Array, h: number, w: number, c: number, k: number, stride: number, padding: Padding, max: boolean) {
  const ay = axis(h, k, stride, 1, padding);
  const ax = axis(w, k, stride, 1, padding);
  const out = new Float32Array(ay.out * ax.out * c);
  for (let oy = 0; oy < ay.out; oy++)
    for (let ox = 0; ox < ax.out; ox++)
      for (let ch = 0; ch < c; ch++) {
        let acc = max ? -Infinity : 0;
        let n = 0;
        for (let ky = 0; ky < k; ky++)
          for (let kx = 0; kx < k; kx++) {
            const iy = oy * stride - ay.before + ky;
            const ix = ox * stride - ax.before + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const v = x[(iy * w + ix) * c + ch]!;
            acc = max ? Math.max(acc, v) : acc + v;
            n++;
          }
        out[(oy * ax.out + ox) * c + ch] = max ? acc : acc / n;
      }
  return { out, dims: [1, ay.out, ax.out, c] };
}

test('MAX_POOL_2D and AVERAGE_POOL_2D: SAME (padding not averaged) and VALID, global average', async () => {
  const cases: [number, number, number, number, number, Padding, boolean][] = [
    [8, 8, 3, 3, 2, 'SAME', true],
    [7, 6, 2, 2, 2, 'VALID', true],
    [6, 6, 3, 3, 1, 'SAME', false],
    [5, 5, 4, 5, 5, 'VALID', false],
  ];
  for (const [h, w, c, k, stride, padding, max] of cases) {
    const x = randoms(h * w * c, random);
    const ref = poolReference(x, h, w, c, k, stride, padding, max);
    const s = new GraphSketch();
    const op = max ? 'MAX_POOL_2D' : 'AVERAGE_POOL_2D';
    const opts = { padding, strideH: stride, strideW: stride, filterH: k, filterW: k, activation: 'NONE' as const };
    s.output(s.op(op, [s.input([1, h, w, c])], ref.dims, opts));
    const { data } = await runSketch(s, [x]);
    assertClose(data, ref.out, `${op} ${h}x${w} k${k} s${stride} ${padding}`);
  }
});

/** Reference RESIZE_BILINEAR with half_pixel_centers (TFLite's ComputeInterpolationValues). */
function resizeReference(x: Float32Array, h: number, w: number, c: number, oh: number, ow: number): Float32Array {
  const out = new Float32Array(oh * ow * c);
  const coord = (o: number, inSize: number, outSize: number) => {
    const v = (o + 0.5) * (inSize / outSize) - 0.5;
    const lo = Math.max(Math.floor(v), 0);
    const hi = Math.min(Math.ceil(v), inSize - 1);
    return { lo, hi, t: v - Math.floor(v) };
  };
  for (let oy = 0; oy < oh; oy++)
    for (let ox = 0; ox < ow; ox++) {
      const y = coord(oy, h, oh);
      const xx = coord(ox, w, ow);
      for (let ch = 0; ch < c; ch++) {
        const at = (iy: number, ix: number) => x[(iy * w + ix) * c + ch]!;
        const top = at(y.lo, xx.lo) * (1 - xx.t) + at(y.lo, xx.hi) * xx.t;
        const bottom = at(y.hi, xx.lo) * (1 - xx.t) + at(y.hi, xx.hi) * xx.t;
        out[(oy * ow + ox) * c + ch] = top * (1 - y.t) + bottom * y.t;
      }
    }
  return out;
}

test('RESIZE_BILINEAR with half-pixel centres: 2× up, non-integer up, down', async () => {
  for (const [h, w, c, oh, ow] of [
    [4, 4, 3, 8, 8],
    [5, 3, 2, 8, 7],
    [8, 8, 2, 3, 5],
  ] as [number, number, number, number, number][]) {
    const x = randoms(h * w * c, random);
    const s = new GraphSketch();
    const size = s.int32([2], [oh, ow]);
    s.output(s.op('RESIZE_BILINEAR', [s.input([1, h, w, c]), size], [1, oh, ow, c], { halfPixelCenters: true, alignCorners: false }));
    const { data } = await runSketch(s, [x]);
    assertClose(data, resizeReference(x, h, w, c, oh, ow), `resize ${h}x${w}→${oh}x${ow}`);
  }
});

test('DEPTH_TO_SPACE: TFLite depth order (block row, block column, channel)', async () => {
  const [h, w, bs, co] = [3, 2, 2, 3];
  const x = randoms(h * w * bs * bs * co, random);
  const expected = new Float32Array(x.length);
  for (let y = 0; y < h; y++)
    for (let xx = 0; xx < w; xx++)
      for (let i = 0; i < bs; i++)
        for (let j = 0; j < bs; j++)
          for (let c = 0; c < co; c++)
            expected[((y * bs + i) * w * bs + (xx * bs + j)) * co + c] = x[(y * w + xx) * bs * bs * co + (i * bs + j) * co + c]!;
  const s = new GraphSketch();
  s.output(s.op('DEPTH_TO_SPACE', [s.input([1, h, w, bs * bs * co])], [1, h * bs, w * bs, co], { blockSize: bs }));
  const { data } = await runSketch(s, [x]);
  assertClose(data, expected, 'depth to space');
});

test('Convolution2DTransposeBias (MediaPipe custom op): SAME, stride 2, kernels 2 and 3, with bias', async () => {
  for (const k of [2, 3]) {
    const [h, w, ci, co, stride] = [4, 3, 3, 2, 2];
    const [oh, ow] = [h * stride, w * stride];
    const x = randoms(h * w * ci, random);
    const f = roundHalf(randoms(co * k * k * ci, random));
    const bias = roundHalf(randoms(co, random));
    const padT = Math.floor(Math.max((h - 1) * stride + k - oh, 0) / 2);
    const padL = Math.floor(Math.max((w - 1) * stride + k - ow, 0) / 2);
    const expected = new Float32Array(oh * ow * co);
    for (let i = 0; i < expected.length; i++) expected[i] = bias[i % co]!;
    for (let iy = 0; iy < h; iy++)
      for (let ix = 0; ix < w; ix++)
        for (let ky = 0; ky < k; ky++)
          for (let kx = 0; kx < k; kx++) {
            const oy = iy * stride + ky - padT;
            const ox = ix * stride + kx - padL;
            if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
            for (let o = 0; o < co; o++)
              for (let i = 0; i < ci; i++)
                expected[(oy * ow + ox) * co + o]! += x[(iy * w + ix) * ci + i]! * f[((o * k + ky) * k + kx) * ci + i]!;
          }
    const s = new GraphSketch();
    const params = new Uint8Array(Int32Array.of(1, stride, stride).buffer);
    const inputs = [s.input([1, h, w, ci]), s.half([co, k, k, ci], f), s.half([co], bias)];
    s.output(s.op('CUSTOM:Convolution2DTransposeBias', inputs, [1, oh, ow, co], {}, params));
    const { data } = await runSketch(s, [x]);
    assertClose(data, expected, `transpose conv k${k}`);
  }
});

test('DENSIFY of a CSR fp16 constant, then DEQUANTIZE, matches the dense values', async () => {
  // [[0, 1.5, 0, 0, -2], [0, 0, 0, 0, 0], [3, 0, 0, 0.25, 0]] stored as CSR on the last dimension.
  const dense = Float32Array.of(0, 1.5, 0, 0, -2, 0, 0, 0, 0, 0, 3, 0, 0, 0.25, 0);
  const sparsity = {
    traversalOrder: [0, 1],
    blockMap: [],
    dimensions: [
      { format: 'DENSE' as const, denseSize: 3, segments: [], indices: [] },
      { format: 'SPARSE_CSR' as const, denseSize: 0, segments: [0, 2, 2, 4], indices: [1, 4, 0, 3] },
    ],
  };
  const s = new GraphSketch();
  const input = s.input([3, 5]);
  const stored = s.sparseHalf([3, 5], Float32Array.of(1.5, -2, 3, 0.25), sparsity);
  const densified = s.op('DENSIFY', [stored], [3, 5]);
  const weights = s.op('DEQUANTIZE', [densified], [3, 5]);
  s.output(s.op('ADD', [input, weights], [3, 5], { activation: 'NONE' }));
  const x = randoms(15, random);
  const { data } = await runSketch(s, [x]);
  assertClose(
    data,
    x.map((v, i) => v + dense[i]!),
    'densify',
  );
});

test("fp16 DEQUANTIZE: the fp16-weight model is smaller and gives exactly the fp32-weight model's output", async () => {
  const values = randoms(64 * 3 * 3 * 16, random);
  const build = (): GraphSketch => {
    const s = new GraphSketch();
    const input = s.input([1, 8, 8, 16]);
    s.output(s.op('CONV_2D', [input, s.half([64, 3, 3, 16], values)], [1, 8, 8, 64], { padding: 'SAME', strideH: 1, strideW: 1 }));
    return s;
  };
  const x = randoms(8 * 8 * 16, random);
  const half = await runSketch(build(), [x], 'float16');
  const full = await runSketch(build(), [x], 'float32');
  assert.deepEqual(half.data, full.data);
  assert.ok(half.bytes < full.bytes * 0.6, `fp16 ${half.bytes} bytes vs fp32 ${full.bytes}`);
  assert.equal(halfToFloat(floatToHalf(0.1)), 0.0999755859375);
});

test('ADD and MUL broadcast per channel (constant [C], activation [1,1,1,C]) with fused RELU', async () => {
  const [h, w, c] = [3, 4, 5];
  const x = randoms(h * w * c, random);
  const gate = randoms(c, random);
  const scale = roundHalf(randoms(c, random));
  const s = new GraphSketch();
  const input = s.input([1, h, w, c]);
  const gateIn = s.input([1, 1, 1, c]);
  const scaled = s.op('MUL', [input, s.half([c], scale)], [1, h, w, c], { activation: 'NONE' });
  s.output(s.op('ADD', [scaled, gateIn], [1, h, w, c], { activation: 'RELU' }));
  const { data } = await runSketch(s, [x, gate]);
  assertClose(
    data,
    x.map((v, i) => Math.max(v * scale[i % c]! + gate[i % c]!, 0)),
    'add/mul broadcast',
  );
});

test('HARD_SWISH, LOGISTIC and RELU', async () => {
  const x = randoms(2 * 3 * 4, random).map((v) => v * 6);
  const cases: [string, (v: number) => number][] = [
    ['HARD_SWISH', (v) => (v * relu6(v + 3)) / 6],
    ['LOGISTIC', (v) => 1 / (1 + Math.exp(-v))],
    ['RELU', (v) => Math.max(v, 0)],
  ];
  for (const [op, f] of cases) {
    const s = new GraphSketch();
    s.output(s.op(op, [s.input([1, 2, 3, 4])], [1, 2, 3, 4]));
    const { data } = await runSketch(s, [x]);
    assertClose(data, x.map(f), op);
  }
});

test('PAD, RESHAPE (to and from rank 4, NHWC element order) and CONCATENATION on channels', async () => {
  const [h, w, c] = [2, 3, 2];
  const x = randoms(h * w * c, random);
  const s = new GraphSketch();
  const input = s.input([1, h, w, c]);
  const padded = s.op('PAD', [input, s.int32([4, 2], [0, 0, 1, 0, 0, 2, 0, 0])], [1, h + 1, w + 2, c]);
  const joined = s.op('CONCATENATION', [padded, padded], [1, h + 1, w + 2, 2 * c], { axis: -1, activation: 'NONE' });
  const flat = s.op('RESHAPE', [joined], [1, (h + 1) * (w + 2) * 2 * c]);
  const back = s.op('RESHAPE', [flat], [1, (w + 2) * 2, h + 1, c]);
  s.output(s.op('RESHAPE', [back], [(h + 1) * (w + 2) * 2 * c]));
  const expected: number[] = [];
  for (let y = 0; y < h + 1; y++)
    for (let xx = 0; xx < w + 2; xx++)
      for (let copy = 0; copy < 2; copy++)
        for (let ch = 0; ch < c; ch++) expected.push(y >= 1 && xx < w ? x[((y - 1) * w + xx) * c + ch]! : 0);
  const { data } = await runSketch(s, [x]);
  assertClose(data, Float32Array.from(expected), 'pad/concat/reshape');
});

test('a model with unsupported ops fails before converting, naming the model and each op', () => {
  const s = new GraphSketch();
  const input = s.input([1, 4]);
  const a = s.op('TANH', [input], [1, 4]);
  const b = s.op('CUSTOM:FancyOp', [a], [1, 4]);
  s.output(s.op('TANH', [b], [1, 4]));
  assert.throws(() => convertGraph(s.graph, { name: 'my_model' }), {
    name: 'UnsupportedOpError',
    message: 'my_model: unsupported TFLite ops: TANH (×2), CUSTOM:FancyOp (×1)',
  });
});

test('an unsupported fused activation fails with the op named', () => {
  const s = new GraphSketch();
  const input = s.input([1, 2, 2, 1]);
  s.output(s.op('ADD', [input, input], [1, 2, 2, 1], { activation: 'TANH' }));
  assert.throws(() => convertGraph(s.graph, { name: 'm' }), /m: operator 0 \(ADD\): ADD: fused activation TANH is not supported/);
});
