/**
 * TFLite → ONNX for the MediaPipe models fittingroom uses. Checks every op
 * first (an unsupported one fails the conversion by name), converts op by
 * op through OP_CONVERTERS, and writes an opset-17 model whose inputs and
 * outputs keep TFLite's names, shapes and NHWC layout.
 */
import { GraphBuilder, TO_NCHW, TO_NHWC, type WeightPrecision } from './graph-builder.ts';
import { OP_CONVERTERS } from './ops/index.ts';
import { encodeOnnxModel, type OnnxValueInfo } from './onnx-writer.ts';
import { parseTflite, type TfliteGraph } from './tflite-model.ts';

/** Bumped whenever the converter's output changes, so cached models are converted again. */
export const CONVERTER_VERSION = 1;

export interface ConvertOptions {
  /** The model's name, used in errors and metadata. */
  name: string;
  /** fp16 (default) keeps half-precision weights in the file behind a Cast. */
  weights?: WeightPrecision;
}

export interface ConvertedModel {
  onnx: Uint8Array;
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  /** How many of each TFLite op the model had. */
  opCounts: Record<string, number>;
}

/** Thrown when a model uses ops the converter does not know. */
export class UnsupportedOpError extends Error {
  readonly ops: string[];
  constructor(model: string, counts: Record<string, number>) {
    const list = Object.entries(counts).map(([op, n]) => `${op} (×${n})`);
    super(`${model}: unsupported TFLite op${list.length > 1 ? 's' : ''}: ${list.join(', ')}`);
    this.name = 'UnsupportedOpError';
    this.ops = Object.keys(counts);
  }
}

/** Converts a parsed TFLite graph. */
export function convertGraph(graph: TfliteGraph, options: ConvertOptions): ConvertedModel {
  const opCounts: Record<string, number> = {};
  const unsupported: Record<string, number> = {};
  for (const { op } of graph.operators) {
    opCounts[op] = (opCounts[op] ?? 0) + 1;
    if (!OP_CONVERTERS[op]) unsupported[op] = (unsupported[op] ?? 0) + 1;
  }
  if (Object.keys(unsupported).length > 0) throw new UnsupportedOpError(options.name, unsupported);

  const g = new GraphBuilder(graph, options.weights ?? 'float16');
  const inputs = graph.inputs.map((i): OnnxValueInfo => {
    const t = g.tensor(i);
    if (t.type !== 'float32') throw new Error(`${options.name}: input ${t.name} is ${t.type}; only float32 inputs are supported`);
    if (t.shape.length === 4) g.node('Transpose', [t.name], [g.name(i)], { perm: [...TO_NCHW] });
    else g.node('Identity', [t.name], [g.name(i)]);
    return { name: t.name, dims: t.shape };
  });
  graph.operators.forEach((op, k) => {
    try {
      OP_CONVERTERS[op.op]!(op, g);
    } catch (error) {
      throw new Error(`${options.name}: operator ${k} (${op.op}): ${(error as Error).message}`, { cause: error });
    }
  });
  const outputs = graph.outputs.map((i): OnnxValueInfo => {
    const t = g.tensor(i);
    if (t.shape.length === 4) g.node('Transpose', [g.input(i)], [t.name], { perm: [...TO_NHWC] });
    else g.node('Identity', [g.input(i)], [t.name]);
    return { name: t.name, dims: t.shape };
  });
  const onnx = encodeOnnxModel({
    nodes: g.nodes,
    initializers: g.initializers,
    inputs,
    outputs,
    producer: 'fittingroom-tflite-to-onnx',
    docString: `${options.name}, converted from TFLite`,
    metadata: { source: options.name, converter_version: String(CONVERTER_VERSION), weights: g.weights },
  });
  return { onnx, inputs, outputs, opCounts };
}

/** Converts `.tflite` bytes. */
export function convertTflite(bytes: Uint8Array, options: ConvertOptions): ConvertedModel {
  return convertGraph(parseTflite(bytes), options);
}
