/** MAX_POOL_2D and AVERAGE_POOL_2D (padding excluded from the average, as in TFLite). */
import type { GraphBuilder } from '../graph-builder.ts';
import type { TfliteOperator } from '../tflite-model.ts';
import { samePads, type OpConverter } from './types.ts';

function pool(op: TfliteOperator, g: GraphBuilder, opType: 'MaxPool' | 'AveragePool'): void {
  const o = op.options;
  const input = op.inputs[0]!;
  const kernel: [number, number] = [o.filterH ?? 1, o.filterW ?? 1];
  const stride: [number, number] = [o.strideH ?? 1, o.strideW ?? 1];
  const [, inH, inW] = g.shape(input) as [number, number, number, number];
  const [, outH, outW] = g.shape(op.outputs[0]!) as [number, number, number, number];
  const pads = o.padding === 'VALID' ? [0, 0, 0, 0] : samePads([inH, inW], [outH, outW], kernel, stride);
  g.withActivation(op, o.activation, (out) => g.node(opType, [g.input(input)], [out], { kernel_shape: kernel, strides: stride, pads }));
}

export const maxPool2d: OpConverter = (op, g) => pool(op, g, 'MaxPool');
export const averagePool2d: OpConverter = (op, g) => pool(op, g, 'AveragePool');
