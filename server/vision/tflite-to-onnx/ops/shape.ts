/** RESHAPE, CONCATENATION, PAD and DEPTH_TO_SPACE: layout-aware moves of data. */
import { TO_NCHW, TO_NHWC } from '../graph-builder.ts';
import type { OpConverter } from './types.ts';

/** Reshape acts on NHWC element order, so rank-4 data is turned back to NHWC around it. */
export const reshape: OpConverter = (op, g) => {
  const input = op.inputs[0]!;
  const output = op.outputs[0]!;
  let source = g.input(input);
  if (g.rank(input) === 4) {
    const nhwc = g.fresh('nhwc');
    g.node('Transpose', [source], [nhwc], { perm: [...TO_NHWC] });
    source = nhwc;
  }
  if (g.rank(output) !== 4) {
    g.node('Reshape', [source, g.int64s(g.shape(output))], [g.name(output)]);
    return;
  }
  const nhwc = g.fresh('nhwc');
  g.node('Reshape', [source, g.int64s(g.shape(output))], [nhwc]);
  g.node('Transpose', [nhwc], [g.name(output)], { perm: [...TO_NCHW] });
};

export const concatenation: OpConverter = (op, g) => {
  const rank = g.rank(op.outputs[0]!);
  const axis = (op.options.axis ?? 0) < 0 ? (op.options.axis ?? 0) + rank : (op.options.axis ?? 0);
  const onnxAxis = rank === 4 ? TO_NHWC[axis]! : axis;
  const inputs = op.inputs.map((i) => g.input(i));
  g.withActivation(op, op.options.activation, (out) => g.node('Concat', inputs, [out], { axis: onnxAxis }));
};

export const pad: OpConverter = (op, g) => {
  const [input, paddings] = op.inputs as [number, number];
  const p = g.requireConst(paddings, 'PAD').data;
  const rank = g.rank(input);
  const order = rank === 4 ? [...TO_NCHW] : Array.from({ length: rank }, (_, k) => k);
  const begins = order.map((d) => Number(p[2 * d]));
  const ends = order.map((d) => Number(p[2 * d + 1]));
  g.node('Pad', [g.input(input), g.int64s([...begins, ...ends])], [g.name(op.outputs[0]!)], { mode: 'constant' });
};

/** TFLite's depth order (block row, block column, channel) is ONNX's DCR mode. */
export const depthToSpace: OpConverter = (op, g) => {
  g.node('DepthToSpace', [g.input(op.inputs[0]!)], [g.name(op.outputs[0]!)], {
    blocksize: op.options.blockSize ?? 2,
    mode: 'DCR',
  });
};
