/**
 * A small builder for hand-written ONNX graphs: ops by name, constants in
 * the graph's compute type, and weights that are only named here (a source
 * tensor, optionally transposed) and written later by `writeModel`, inline
 * or as external data, so building the graph never holds the weights.
 */
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { float32ToF16 } from './half.ts';
import {
  encodeOnnxModel,
  onnxDataType,
  type AttributeValue,
  type OnnxExternalInitializer,
  type OnnxInitializer,
  type OnnxNode,
  type OnnxValueInfo,
} from './writer.ts';

/** The element type activations and weights are computed in. */
export type ComputeType = 'float32' | 'float16';

/** A weight the graph uses: `source` is the checkpoint's tensor, `dims` the shape in the graph. */
export interface WeightRef {
  name: string;
  source: string;
  dims: number[];
  /** Swap the two axes of a matrix (a Linear's [out, in] becomes MatMul's [in, out]). */
  transpose: boolean;
}

/** Where `writeModel` reads weights from. */
export interface WeightSource {
  /** The tensor's values as float32, in the checkpoint's layout. */
  read(name: string): Promise<Float32Array>;
}

/** An ONNX graph under construction. */
export class OnnxGraph {
  readonly compute: ComputeType;
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxInitializer[] = [];
  readonly weights: WeightRef[] = [];
  readonly inputs: OnnxValueInfo[] = [];
  readonly outputs: OnnxValueInfo[] = [];
  private readonly weightNames = new Map<string, string>();
  private counter = 0;

  constructor(compute: ComputeType = 'float32') {
    this.compute = compute;
  }

  /** A fresh value name. */
  fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }

  /** Emits one node and returns its outputs' names. */
  ops(opType: string, inputs: string[], outputs: number, attributes?: Record<string, AttributeValue>, domain?: string): string[] {
    const names = Array.from({ length: outputs }, () => this.fresh(opType.toLowerCase()));
    this.nodes.push({
      name: this.fresh(`n_${opType}`),
      opType,
      inputs,
      outputs: names,
      ...(attributes ? { attributes } : {}),
      ...(domain ? { domain } : {}),
    });
    return names;
  }

  /** Emits one single-output node and returns its output's name. */
  op(opType: string, inputs: string[], attributes?: Record<string, AttributeValue>, domain?: string): string {
    return this.ops(opType, inputs, 1, attributes, domain)[0]!;
  }

  /** Declares a graph input. */
  input(info: OnnxValueInfo): string {
    this.inputs.push(info);
    return info.name;
  }

  /** Declares `value` as the graph output `info.name`. */
  output(value: string, info: OnnxValueInfo): void {
    this.nodes.push({ name: this.fresh('n_output'), opType: 'Identity', inputs: [value], outputs: [info.name] });
    this.outputs.push(info);
  }

  /** A constant in the compute type. */
  constant(values: ArrayLike<number>, dims: number[]): string {
    const name = this.fresh('c');
    const data = Float32Array.from(values);
    this.initializers.push(
      this.compute === 'float16' ? { name, dims, type: 'float16', data: float32ToF16(data) } : { name, dims, type: 'float32', data },
    );
    return name;
  }

  /** A float32 constant, whatever the compute type (for parts kept in float32). */
  constant32(values: ArrayLike<number>, dims: number[]): string {
    const name = this.fresh('c32');
    this.initializers.push({ name, dims, type: 'float32', data: Float32Array.from(values) });
    return name;
  }

  /** A scalar constant in the compute type. */
  scalar(value: number): string {
    return this.constant([value], []);
  }

  /** A 1-D int64 constant (shapes, axes, split sizes). */
  ints(values: readonly number[]): string {
    const name = this.fresh('i');
    this.initializers.push({ name, dims: [values.length], type: 'int64', data: BigInt64Array.from(values, (v) => BigInt(v)) });
    return name;
  }

  /** Casts to float32 or float16. */
  cast(value: string, to: ComputeType): string {
    return this.op('Cast', [value], { to: onnxDataType(to) });
  }

  /** A weight from the checkpoint; the same source and layout is stored once. */
  weight(source: string, dims: number[], transpose = false): string {
    const key = `${source}${transpose ? '^T' : ''}`;
    const known = this.weightNames.get(key);
    if (known) return known;
    const name = `w:${key}`;
    this.weightNames.set(key, name);
    this.weights.push({ name, source, dims, transpose });
    return name;
  }
}

function transposed(values: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = values[r * cols + c]!;
  return out;
}

/** A weight's values in the graph's layout and compute type. */
async function weightBytes(graph: OnnxGraph, ref: WeightRef, source: WeightSource): Promise<Float32Array | Uint16Array> {
  let values = await source.read(ref.source);
  const count = ref.dims.reduce((a, b) => a * b, 1);
  if (values.length !== count) throw new Error(`weight ${ref.source}: ${values.length} values, the graph needs [${ref.dims.join(',')}]`);
  if (ref.transpose) {
    const [cols, rows] = ref.dims as [number, number];
    values = transposed(values, rows, cols);
  }
  return graph.compute === 'float16' ? float32ToF16(values) : values;
}

export interface WriteModelOptions {
  producer: string;
  metadata?: Record<string, string>;
}

/**
 * Writes the model to `modelPath` and its weights to `<modelPath>.data`
 * (ONNX external data), reading each weight from `source` once, in order.
 */
export async function writeModel(graph: OnnxGraph, source: WeightSource, modelPath: string, options: WriteModelOptions): Promise<void> {
  const external: OnnxExternalInitializer[] = [];
  const dataPath = `${modelPath}.data`;
  const data = await open(dataPath, 'w');
  try {
    let offset = 0;
    for (const ref of graph.weights) {
      const values = await weightBytes(graph, ref, source);
      const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
      await data.write(bytes, 0, bytes.length, offset);
      external.push({ name: ref.name, dims: ref.dims, type: graph.compute, location: basename(dataPath), offset, length: bytes.length });
      // 64-byte alignment lets ONNX Runtime map the file and use tensors in place.
      offset += Math.ceil(bytes.length / 64) * 64;
    }
    await data.sync();
  } finally {
    await data.close();
  }
  const bytes = encodeOnnxModel({
    nodes: graph.nodes,
    initializers: graph.initializers,
    external,
    inputs: graph.inputs,
    outputs: graph.outputs,
    producer: options.producer,
    ...(options.metadata ? { metadata: options.metadata } : {}),
  });
  const handle = await open(modelPath, 'w');
  try {
    await handle.write(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Encodes a graph with every weight inline and returns the bytes (tests and small models). */
export async function encodeInline(graph: OnnxGraph, source: WeightSource, producer: string): Promise<Uint8Array> {
  const inline: OnnxInitializer[] = [];
  for (const ref of graph.weights)
    inline.push({ name: ref.name, dims: ref.dims, type: graph.compute, data: await weightBytes(graph, ref, source) });
  return encodeOnnxModel({
    nodes: graph.nodes,
    initializers: [...graph.initializers, ...inline],
    inputs: graph.inputs,
    outputs: graph.outputs,
    producer,
  });
}
