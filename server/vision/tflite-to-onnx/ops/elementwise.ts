/** ADD and MUL (with broadcasting), PRELU and the unary activations. */
import { permute } from '../constants.ts';
import { TO_NCHW, type GraphBuilder } from '../graph-builder.ts';
import type { TfliteOperator } from '../tflite-model.ts';
import type { OpConverter } from './types.ts';

/**
 * An operand of a rank-4 (NCHW) result. TFLite broadcasts NHWC shapes from
 * the right, so a lower-rank operand is first padded to rank 4 with leading
 * 1s, then laid out NCHW like the activation.
 */
function broadcastOperand(g: GraphBuilder, index: number): string {
  const shape = g.shape(index);
  if (shape.length === 4) return g.input(index);
  const nhwc = [...new Array<number>(4 - shape.length).fill(1), ...shape];
  const c = g.constant(index);
  if (c) return g.floatInitializer(g.fresh('bc'), permute({ ...c, dims: nhwc }, TO_NCHW));
  const reshaped = g.fresh('bc');
  g.node('Reshape', [g.input(index), g.int64s(nhwc)], [reshaped]);
  const out = g.fresh('bc');
  g.node('Transpose', [reshaped], [out], { perm: [...TO_NCHW] });
  return out;
}

function binary(op: TfliteOperator, g: GraphBuilder, opType: 'Add' | 'Mul'): void {
  const rank4 = g.rank(op.outputs[0]!) === 4;
  const inputs = op.inputs.map((i) => (rank4 ? broadcastOperand(g, i) : g.input(i)));
  g.withActivation(op, op.options.activation, (out) => g.node(opType, inputs, [out]));
}

function unary(opType: string): OpConverter {
  return (op, g) => g.node(opType, [g.input(op.inputs[0]!)], [g.name(op.outputs[0]!)]);
}

/**
 * PRELU: x where x ≥ 0, alpha·x elsewhere. TFLite's alpha broadcasts against
 * the NHWC input from the right (MediaPipe's face models store [1,1,C]); ONNX
 * PRelu broadcasts the slope the same way, so a rank-4 input's alpha is laid
 * out NCHW ([1,C,1,1]) exactly like a per-channel ADD operand.
 */
export const prelu: OpConverter = (op, g) => {
  const [x, alpha] = op.inputs as [number, number];
  const slope = g.rank(op.outputs[0]!) === 4 ? broadcastOperand(g, alpha) : g.input(alpha);
  g.node('PRelu', [g.input(x), slope], [g.name(op.outputs[0]!)]);
};

export const add: OpConverter = (op, g) => binary(op, g, 'Add');
export const mul: OpConverter = (op, g) => binary(op, g, 'Mul');
export const logistic = unary('Sigmoid');
export const relu = unary('Relu');
export const hardSwish = unary('HardSwish');
