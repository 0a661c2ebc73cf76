/**
 * The TFLite model as the converter sees it: tensors, operators with their
 * options already decoded, graph inputs and outputs. `parseTflite` reads it
 * from a `.tflite` flatbuffer; tests build the same shape by hand.
 * Field indices follow tensorflow/lite/schema/schema.fbs (schema v3).
 */
import { FlatBufferReader } from './flatbuffer.ts';

export type TensorType = 'float32' | 'float16' | 'int32' | 'uint8' | 'int64' | 'string' | 'bool' | 'int16' | 'int8' | 'other';

const TENSOR_TYPES: readonly TensorType[] = ['float32', 'float16', 'int32', 'uint8', 'int64', 'string', 'bool', 'int16', 'other', 'int8'];

/** Builtin operator codes by number (those we convert, and common ones an error may name). */
const BUILTIN_OPS: Readonly<Record<number, string>> = {
  0: 'ADD',
  1: 'AVERAGE_POOL_2D',
  2: 'CONCATENATION',
  3: 'CONV_2D',
  4: 'DEPTHWISE_CONV_2D',
  5: 'DEPTH_TO_SPACE',
  6: 'DEQUANTIZE',
  8: 'FLOOR',
  9: 'FULLY_CONNECTED',
  14: 'LOGISTIC',
  17: 'MAX_POOL_2D',
  18: 'MUL',
  19: 'RELU',
  21: 'RELU6',
  22: 'RESHAPE',
  23: 'RESIZE_BILINEAR',
  25: 'SOFTMAX',
  28: 'TANH',
  32: 'CUSTOM',
  34: 'PAD',
  36: 'GATHER',
  39: 'TRANSPOSE',
  40: 'MEAN',
  41: 'SUB',
  42: 'DIV',
  43: 'SQUEEZE',
  45: 'STRIDED_SLICE',
  47: 'EXP',
  49: 'SPLIT',
  53: 'CAST',
  54: 'PRELU',
  55: 'MAXIMUM',
  57: 'MINIMUM',
  60: 'PADV2',
  65: 'SLICE',
  67: 'TRANSPOSE_CONV',
  70: 'EXPAND_DIMS',
  74: 'SUM',
  97: 'RESIZE_NEAREST_NEIGHBOR',
  98: 'LEAKY_RELU',
  114: 'QUANTIZE',
  117: 'HARD_SWISH',
  124: 'DENSIFY',
  126: 'BATCH_MATMUL',
};

export type Padding = 'SAME' | 'VALID';
export type FusedActivation = 'NONE' | 'RELU' | 'RELU_N1_TO_1' | 'RELU6' | 'TANH' | 'SIGN_BIT';
const ACTIVATIONS: readonly FusedActivation[] = ['NONE', 'RELU', 'RELU_N1_TO_1', 'RELU6', 'TANH', 'SIGN_BIT'];

/** Builtin options of the ops we convert; only the fields of the operator's own options table are set. */
export interface OpOptions {
  padding?: Padding;
  strideW?: number;
  strideH?: number;
  dilationW?: number;
  dilationH?: number;
  depthMultiplier?: number;
  filterW?: number;
  filterH?: number;
  activation?: FusedActivation;
  axis?: number;
  alignCorners?: boolean;
  halfPixelCenters?: boolean;
  newShape?: number[];
  blockSize?: number;
}

/** A dimension of a sparse tensor (TFLite DimensionMetadata). */
export interface SparseDimension {
  format: 'DENSE' | 'SPARSE_CSR';
  denseSize: number;
  segments: number[];
  indices: number[];
}

/** TFLite SparsityParameters. */
export interface Sparsity {
  traversalOrder: number[];
  blockMap: number[];
  dimensions: SparseDimension[];
}

export interface TfliteTensor {
  name: string;
  shape: number[];
  type: TensorType;
  /** Constant contents (little-endian), or null for an activation. */
  data: Uint8Array | null;
  sparsity: Sparsity | null;
  /** Whether the tensor carries affine quantization parameters (not supported). */
  quantized: boolean;
}

export interface TfliteOperator {
  /** The builtin name (`CONV_2D`) or `CUSTOM:<custom code>`. */
  op: string;
  inputs: number[];
  outputs: number[];
  options: OpOptions;
  /** Raw custom options (custom ops only). */
  customOptions: Uint8Array | null;
}

/** One TFLite subgraph, ready to convert. */
export interface TfliteGraph {
  tensors: TfliteTensor[];
  operators: TfliteOperator[];
  inputs: number[];
  outputs: number[];
}

const padding = (value: number): Padding => (value === 1 ? 'VALID' : 'SAME');
const activation = (value: number): FusedActivation => ACTIVATIONS[value] ?? 'SIGN_BIT';

/** Decodes the builtin options table of one operator. */
function readOptions(fb: FlatBufferReader, op: string, t: number): OpOptions {
  if (!t) return {};
  switch (op) {
    case 'CONV_2D':
      return {
        padding: padding(fb.int8(t, 0)),
        strideW: fb.int32(t, 1),
        strideH: fb.int32(t, 2),
        activation: activation(fb.int8(t, 3)),
        dilationW: fb.int32(t, 4, 1),
        dilationH: fb.int32(t, 5, 1),
      };
    case 'DEPTHWISE_CONV_2D':
      return {
        padding: padding(fb.int8(t, 0)),
        strideW: fb.int32(t, 1),
        strideH: fb.int32(t, 2),
        depthMultiplier: fb.int32(t, 3, 1),
        activation: activation(fb.int8(t, 4)),
        dilationW: fb.int32(t, 5, 1),
        dilationH: fb.int32(t, 6, 1),
      };
    case 'AVERAGE_POOL_2D':
    case 'MAX_POOL_2D':
      return {
        padding: padding(fb.int8(t, 0)),
        strideW: fb.int32(t, 1),
        strideH: fb.int32(t, 2),
        filterW: fb.int32(t, 3),
        filterH: fb.int32(t, 4),
        activation: activation(fb.int8(t, 5)),
      };
    case 'CONCATENATION':
      return { axis: fb.int32(t, 0), activation: activation(fb.int8(t, 1)) };
    case 'ADD':
    case 'MUL':
      return { activation: activation(fb.int8(t, 0)) };
    case 'RESIZE_BILINEAR':
      return { alignCorners: fb.bool(t, 2), halfPixelCenters: fb.bool(t, 3) };
    case 'RESHAPE':
      return { newShape: fb.int32s(t, 0) };
    case 'DEPTH_TO_SPACE':
      return { blockSize: fb.int32(t, 0) };
    default:
      return {};
  }
}

const INDEX_WIDTH: Readonly<Record<number, 1 | 2 | 4>> = { 1: 4, 2: 2, 3: 1 };

function readSparsity(fb: FlatBufferReader, t: number): Sparsity | null {
  if (!t) return null;
  const indexVector = (dm: number, typeField: number, valueField: number): number[] => {
    const width = INDEX_WIDTH[fb.uint8(dm, typeField)];
    const table = fb.table(dm, valueField);
    return width && table ? fb.unsigneds(table, 0, width) : [];
  };
  return {
    traversalOrder: fb.int32s(t, 0),
    blockMap: fb.int32s(t, 1),
    dimensions: fb.tables(t, 2).map((dm) => ({
      format: fb.int8(dm, 0) === 1 ? 'SPARSE_CSR' : 'DENSE',
      denseSize: fb.int32(dm, 1),
      segments: indexVector(dm, 2, 3),
      indices: indexVector(dm, 4, 5),
    })),
  };
}

/** Parses the first subgraph of a `.tflite` file. Throws on anything that is not a TFLite v3 model. */
export function parseTflite(bytes: Uint8Array): TfliteGraph {
  const fb = new FlatBufferReader(bytes);
  if (bytes.byteLength < 8 || fb.identifier() !== 'TFL3') throw new Error('not a TFLite model (no TFL3 identifier)');
  const model = fb.root();
  const version = fb.uint32(model, 0);
  if (version !== 3) throw new Error(`unsupported TFLite schema version ${version}`);
  const opNames = fb.tables(model, 1).map((oc) => {
    const code = Math.max(fb.int8(oc, 0), fb.int32(oc, 3));
    return code === 32 ? `CUSTOM:${fb.string(oc, 1) ?? ''}` : (BUILTIN_OPS[code] ?? `BUILTIN_${code}`);
  });
  const buffers = fb.tables(model, 4).map((b) => fb.byteVector(b, 0));
  const subgraphs = fb.tables(model, 2);
  if (subgraphs.length !== 1) throw new Error(`expected one subgraph, found ${subgraphs.length}`);
  const sg = subgraphs[0]!;
  const tensors = fb.tables(sg, 0).map((t): TfliteTensor => {
    const data = buffers[fb.uint32(t, 2)] ?? null;
    const q = fb.table(t, 4);
    return {
      name: fb.string(t, 3) ?? '',
      shape: fb.int32s(t, 0),
      type: TENSOR_TYPES[fb.int8(t, 1)] ?? 'other',
      data: data && data.byteLength > 0 ? data : null,
      sparsity: readSparsity(fb, fb.table(t, 6)),
      quantized: q !== 0 && (fb.vector(q, 2)?.length ?? 0) > 0,
    };
  });
  const operators = fb.tables(sg, 3).map((o): TfliteOperator => {
    const op = opNames[fb.uint32(o, 0)] ?? 'UNKNOWN';
    return {
      op,
      inputs: fb.int32s(o, 1),
      outputs: fb.int32s(o, 2),
      options: readOptions(fb, op, fb.table(o, 4)),
      customOptions: fb.byteVector(o, 5),
    };
  });
  return { tensors, operators, inputs: fb.int32s(sg, 1), outputs: fb.int32s(sg, 2) };
}
