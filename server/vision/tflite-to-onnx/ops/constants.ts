/** DEQUANTIZE and DENSIFY of constant weights: folded at build time, no nodes. */
import type { OpConverter } from './types.ts';

/** fp16 → fp32 of a constant stays a constant (its precision is decided when it is written). */
export const dequantize: OpConverter = (op, g) => {
  const [input] = op.inputs as [number];
  const c = g.constant(input);
  if (c) {
    if (c.type !== 'float16' && c.type !== 'float32') throw new Error(`DEQUANTIZE of ${c.type} is not supported`);
    g.fold(op.outputs[0]!, c);
    return;
  }
  if (g.tensor(input).type !== 'float16') throw new Error(`DEQUANTIZE of a ${g.tensor(input).type} activation is not supported`);
  g.node('Cast', [g.input(input)], [g.name(op.outputs[0]!)], { to: 1 });
};

/** A sparse constant becomes dense. */
export const densifyOp: OpConverter = (op, g) => {
  const [input] = op.inputs as [number];
  if (!g.isConst(input)) throw new Error('DENSIFY of an activation is not supported');
  g.fold(op.outputs[0]!, g.densified(input));
};
