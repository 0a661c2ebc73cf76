/**
 * The converter's working state while it walks a TFLite graph: ONNX nodes
 * and initializers so far, constants folded at build time, and helpers the
 * op modules share.
 *
 * Layout rule: every rank-4 activation lives in NCHW inside the ONNX graph
 * (TFLite's are NHWC); everything else keeps TFLite's layout. Graph inputs
 * and outputs are transposed at the boundary, so the ONNX model's I/O
 * contract is TFLite's.
 */
import { densify, permute, readConst, sizeOf, toFloat32, type ConstTensor } from './constants.ts';
import type { OnnxInitializer, OnnxNode, AttributeValue } from './onnx-writer.ts';
import { onnxDataType } from './onnx-writer.ts';
import type { FusedActivation, TfliteGraph, TfliteOperator, TfliteTensor } from './tflite-model.ts';

/** How weights are stored: fp16 initializers with a Cast, or fp32. */
export type WeightPrecision = 'float16' | 'float32';

/** NHWC → NCHW and back. */
export const TO_NCHW = [0, 3, 1, 2] as const;
export const TO_NHWC = [0, 2, 3, 1] as const;

export class GraphBuilder {
  readonly graph: TfliteGraph;
  readonly weights: WeightPrecision;
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxInitializer[] = [];
  /** Constants produced by folding (DEQUANTIZE, DENSIFY), by tensor index. */
  private readonly folded = new Map<number, ConstTensor>();
  private readonly materialized = new Set<number>();
  private counter = 0;

  constructor(graph: TfliteGraph, weights: WeightPrecision) {
    this.graph = graph;
    this.weights = weights;
  }

  tensor(index: number): TfliteTensor {
    const t = this.graph.tensors[index];
    if (!t) throw new Error(`no tensor ${index}`);
    return t;
  }

  /** The TFLite (NHWC) shape of a tensor. */
  shape(index: number): number[] {
    return this.tensor(index).shape;
  }

  rank(index: number): number {
    return this.shape(index).length;
  }

  /** The ONNX name of a TFLite tensor inside the graph. */
  name(index: number): string {
    return `t${index}`;
  }

  /** A fresh internal name. */
  fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }

  /** Whether a tensor is a constant (stored in the model or folded). */
  isConst(index: number): boolean {
    return this.folded.has(index) || this.tensor(index).data !== null;
  }

  /** A constant's value (dense; a sparse tensor must go through DENSIFY), or null for an activation. */
  constant(index: number): ConstTensor | null {
    const folded = this.folded.get(index);
    if (folded) return folded;
    const t = this.tensor(index);
    if (!t.data) return null;
    if (t.sparsity) throw new Error(`tensor ${t.name} is sparse and not behind a DENSIFY`);
    return readConst(t);
  }

  /** Same as constant() but throws when the tensor is an activation. */
  requireConst(index: number, what: string): ConstTensor {
    const c = this.constant(index);
    if (!c) throw new Error(`${what}: tensor ${this.tensor(index).name} must be a constant`);
    return c;
  }

  /** A sparse constant's stored values with its shape, densified. */
  densified(index: number): ConstTensor {
    const t = this.tensor(index);
    const raw = this.folded.get(index) ?? readConst(t);
    return t.sparsity ? densify(raw, t.shape, t.sparsity) : raw;
  }

  /** Records that `index` is the constant `value` (no node emitted). */
  fold(index: number, value: ConstTensor): void {
    this.folded.set(index, value);
  }

  node(opType: string, inputs: string[], outputs: string[], attributes?: Record<string, AttributeValue>): void {
    this.nodes.push({ name: this.fresh(opType), opType, inputs, outputs, ...(attributes ? { attributes } : {}) });
  }

  /**
   * Adds a float constant and returns the name of a float32 tensor holding it.
   * fp16 data stays fp16 in the file when weights are fp16, behind a Cast
   * that ONNX Runtime folds at session load.
   */
  floatInitializer(name: string, c: ConstTensor): string {
    if (c.type === 'float16' && this.weights === 'float16') {
      this.initializers.push({ name: `${name}_f16`, dims: c.dims, type: 'float16', data: c.data as Uint16Array });
      this.node('Cast', [`${name}_f16`], [name], { to: onnxDataType('float32') });
      return name;
    }
    this.initializers.push({ name, dims: c.dims, type: 'float32', data: toFloat32(c) });
    return name;
  }

  /** An int64 initializer (shapes, pads, sizes). */
  int64s(values: readonly number[]): string {
    const name = this.fresh('i64');
    this.initializers.push({ name, dims: [values.length], type: 'int64', data: BigInt64Array.from(values, (v) => BigInt(v)) });
    return name;
  }

  /** A float32 scalar initializer. */
  scalar(value: number): string {
    const name = this.fresh('f');
    this.initializers.push({ name, dims: [], type: 'float32', data: Float32Array.of(value) });
    return name;
  }

  /**
   * The ONNX name of an op input. A rank-4 constant used as an activation is
   * stored NCHW; any constant becomes an initializer the first time it is used.
   */
  input(index: number): string {
    const name = this.name(index);
    if (!this.isConst(index) || this.materialized.has(index)) return name;
    this.materialized.add(index);
    let c = this.requireConst(index, 'input');
    if (c.dims.length === 4) c = permute(c, TO_NCHW);
    if (c.type === 'int32') this.initializers.push({ name, dims: c.dims, type: 'int32', data: c.data as Int32Array });
    else this.floatInitializer(name, c);
    return name;
  }

  /**
   * Emits an op whose result goes through a fused activation: `emit` writes to
   * the name it is given, and the activation (if any) writes the op's output.
   */
  withActivation(op: TfliteOperator, activation: FusedActivation | undefined, emit: (output: string) => void): void {
    const output = this.name(op.outputs[0]!);
    switch (activation ?? 'NONE') {
      case 'NONE':
        emit(output);
        return;
      case 'RELU': {
        const pre = this.fresh('pre');
        emit(pre);
        this.node('Relu', [pre], [output]);
        return;
      }
      case 'RELU6':
      case 'RELU_N1_TO_1': {
        const pre = this.fresh('pre');
        emit(pre);
        const [lo, hi] = activation === 'RELU6' ? [0, 6] : [-1, 1];
        this.node('Clip', [pre, this.scalar(lo), this.scalar(hi)], [output]);
        return;
      }
      default:
        throw new Error(`${op.op}: fused activation ${activation} is not supported`);
    }
  }

  /** The number of elements of a tensor. */
  size(index: number): number {
    return sizeOf(this.shape(index));
  }
}
