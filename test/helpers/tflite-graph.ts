/**
 * Tiny TFLite graphs built by hand for converter tests, plus a runner that
 * converts one and runs it in onnxruntime-node.
 */
import { floatToHalf } from '../../server/vision/tflite-to-onnx/constants.ts';
import { convertGraph } from '../../server/vision/tflite-to-onnx/convert.ts';
import type { WeightPrecision } from '../../server/vision/tflite-to-onnx/graph-builder.ts';
import type { OpOptions, Sparsity, TensorType, TfliteGraph } from '../../server/vision/tflite-to-onnx/tflite-model.ts';
import { OrtSession } from '../../server/onnx/ort.ts';

/** A seeded generator of floats in [-1, 1) (never Math.random). */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

export function randoms(n: number, random: () => number): Float32Array {
  return Float32Array.from({ length: n }, random);
}

const bytesOf = (a: Float32Array | Uint16Array | Int32Array): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

/** Builds a TfliteGraph one tensor and op at a time. */
export class GraphSketch {
  readonly graph: TfliteGraph = { tensors: [], operators: [], inputs: [], outputs: [] };

  private tensor(shape: number[], type: TensorType, data: Uint8Array | null, sparsity: Sparsity | null = null): number {
    this.graph.tensors.push({ name: `x${this.graph.tensors.length}`, shape, type, data, sparsity, quantized: false });
    return this.graph.tensors.length - 1;
  }

  input(shape: number[]): number {
    const i = this.tensor(shape, 'float32', null);
    this.graph.inputs.push(i);
    return i;
  }

  float(shape: number[], values: Float32Array): number {
    return this.tensor(shape, 'float32', bytesOf(values));
  }

  /** fp16 constant (values rounded to half) behind a DEQUANTIZE, as MediaPipe stores weights. */
  half(shape: number[], values: Float32Array): number {
    const raw = this.tensor(shape, 'float16', bytesOf(Uint16Array.from(values, floatToHalf)));
    return this.op('DEQUANTIZE', [raw], shape);
  }

  /** A sparse fp16 constant: its stored values and sparsity parameters. */
  sparseHalf(shape: number[], values: Float32Array, sparsity: Sparsity): number {
    return this.tensor(shape, 'float16', bytesOf(Uint16Array.from(values, floatToHalf)), sparsity);
  }

  int32(shape: number[], values: number[]): number {
    return this.tensor(shape, 'int32', bytesOf(Int32Array.from(values)));
  }

  op(op: string, inputs: number[], outShape: number[], options: OpOptions = {}, customOptions: Uint8Array | null = null): number {
    const out = this.tensor(outShape, 'float32', null);
    this.graph.operators.push({ op, inputs, outputs: [out], options, customOptions });
    return out;
  }

  output(index: number): void {
    this.graph.outputs.push(index);
  }
}

/** Converts a sketch and runs it once; returns the first output and the model size. */
export async function runSketch(
  sketch: GraphSketch,
  feeds: Float32Array[],
  weights: WeightPrecision = 'float16',
): Promise<{ data: Float32Array; dims: readonly number[]; bytes: number }> {
  const { onnx, inputs } = convertGraph(sketch.graph, { name: 'sketch', weights });
  const session = await OrtSession.create(onnx, { name: 'sketch', threads: 1 });
  try {
    const result = await session.run(Object.fromEntries(inputs.map((v, k) => [v.name, { data: feeds[k]!, dims: v.dims }])));
    const first = result[session.outputNames[0]!]!;
    return { data: first.data, dims: first.dims, bytes: onnx.byteLength };
  } finally {
    await session.release();
  }
}
