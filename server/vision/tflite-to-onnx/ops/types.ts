import type { GraphBuilder } from '../graph-builder.ts';
import type { TfliteOperator } from '../tflite-model.ts';

/** Converts one TFLite operator into ONNX nodes (or a folded constant). */
export type OpConverter = (op: TfliteOperator, g: GraphBuilder) => void;

/**
 * ONNX pads [top, left, bottom, right] for TFLite SAME padding: the total
 * that makes the output size come out, the odd row/column at the end.
 */
export function samePads(
  inSize: [number, number],
  outSize: [number, number],
  kernel: [number, number],
  stride: [number, number],
  dilation: [number, number] = [1, 1],
): number[] {
  const total = [0, 1].map((a) => Math.max((outSize[a]! - 1) * stride[a]! + (kernel[a]! - 1) * dilation[a]! + 1 - inSize[a]!, 0));
  const begin = total.map((t) => Math.floor(t / 2));
  return [begin[0]!, begin[1]!, total[0]! - begin[0]!, total[1]! - begin[1]!];
}
