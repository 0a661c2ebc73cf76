/**
 * Serializes a plain description of an ONNX graph to ModelProto bytes. The
 * only module that touches the protobuf schema (onnx-proto's generated
 * protobufjs code), so graph builders (the TFLite converter, the FASHN VTON
 * network) deal in plain objects. Initializers are inline, or external: their
 * bytes live in a separate file next to the model (ONNX's external data), so
 * a model of several GB never passes through protobuf's 2 GB limit.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** ONNX opset the default domain targets (HardSwish needs 14; Resize/Pad as of 13+). */
export const OPSET = 17;

/** The contrib-op domain of ONNX Runtime (MultiHeadAttention, …). */
export const MS_DOMAIN = 'com.microsoft';

/** An attribute: an int, a list of ints, a string, or an explicit float. */
export type AttributeValue = number | number[] | string | { float: number };

export interface OnnxNode {
  name: string;
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, AttributeValue>;
  /** The op's domain; the default ONNX domain when absent. */
  domain?: string;
}

export type InitializerType = 'float32' | 'float16' | 'int32' | 'int64';

export interface OnnxInitializer {
  name: string;
  dims: number[];
  type: InitializerType;
  data: Float32Array | Uint16Array | Int32Array | BigInt64Array;
}

/** An initializer whose bytes are at `offset` (length `length`) in the file `location`, relative to the model. */
export interface OnnxExternalInitializer {
  name: string;
  dims: number[];
  type: InitializerType;
  location: string;
  offset: number;
  length: number;
}

/** A graph input or output (float32 unless `type` says otherwise) with a static shape. */
export interface OnnxValueInfo {
  name: string;
  dims: number[];
  /** Symbolic names for dimensions that vary (e.g. the batch); entries that are set replace `dims`. */
  dimParams?: (string | null)[];
  type?: InitializerType;
}

export interface OnnxModelSpec {
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
  external?: OnnxExternalInitializer[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
  producer: string;
  docString?: string;
  metadata?: Record<string, string>;
}

const DATA_TYPES: Readonly<Record<InitializerType, number>> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  float16: onnx.TensorProto.DataType.FLOAT16,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
};

/** The ONNX element type number for a tensor type (Cast's `to`). */
export function onnxDataType(type: InitializerType): number {
  return DATA_TYPES[type];
}

function attribute(name: string, value: AttributeValue): onnxProto.onnx.IAttributeProto {
  const types = onnx.AttributeProto.AttributeType;
  if (Array.isArray(value)) return { name, type: types.INTS, ints: value };
  if (typeof value === 'string') return { name, type: types.STRING, s: new TextEncoder().encode(value) };
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error(`attribute ${name}: ${value} is not an integer (use {float})`);
    return { name, type: types.INT, i: value };
  }
  return { name, type: types.FLOAT, f: value.float };
}

function valueInfo(v: OnnxValueInfo): onnxProto.onnx.IValueInfoProto {
  const dim = v.dims.map((d, k) => {
    const param = v.dimParams?.[k];
    return param ? { dimParam: param } : { dimValue: d };
  });
  return { name: v.name, type: { tensorType: { elemType: DATA_TYPES[v.type ?? 'float32'], shape: { dim } } } };
}

/** Encodes a model (IR version 8, default domain at OPSET, com.microsoft when a node uses it). */
export function encodeOnnxModel(spec: OnnxModelSpec): Uint8Array {
  const graph: onnxProto.onnx.IGraphProto = {
    name: 'main',
    node: spec.nodes.map((n) => ({
      name: n.name,
      opType: n.opType,
      input: n.inputs,
      output: n.outputs,
      attribute: Object.entries(n.attributes ?? {}).map(([k, v]) => attribute(k, v)),
      ...(n.domain ? { domain: n.domain } : {}),
    })),
    initializer: [
      ...spec.initializers.map((t) => ({
        name: t.name,
        dims: t.dims,
        dataType: DATA_TYPES[t.type],
        rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
      })),
      ...(spec.external ?? []).map((t) => ({
        name: t.name,
        dims: t.dims,
        dataType: DATA_TYPES[t.type],
        dataLocation: onnx.TensorProto.DataLocation.EXTERNAL,
        externalData: [
          { key: 'location', value: t.location },
          { key: 'offset', value: String(t.offset) },
          { key: 'length', value: String(t.length) },
        ],
      })),
    ],
    input: spec.inputs.map(valueInfo),
    output: spec.outputs.map(valueInfo),
  };
  const opsetImport = [{ domain: '', version: OPSET }];
  if (spec.nodes.some((n) => n.domain === MS_DOMAIN)) opsetImport.push({ domain: MS_DOMAIN, version: 1 });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport,
    producerName: spec.producer,
    docString: spec.docString ?? '',
    metadataProps: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}
