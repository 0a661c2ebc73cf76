/**
 * Serializes a plain description of an ONNX graph to ModelProto bytes. The
 * only module that touches the protobuf schema (onnx-proto's generated
 * protobufjs code), so the converter deals in plain objects.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** ONNX opset the converter targets (HardSwish needs 14; Resize/Pad as of 13+). */
export const OPSET = 17;

/** An attribute: an int, a list of ints, a string, or an explicit float. */
export type AttributeValue = number | number[] | string | { float: number };

export interface OnnxNode {
  name: string;
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, AttributeValue>;
}

export type InitializerType = 'float32' | 'float16' | 'int32' | 'int64';

export interface OnnxInitializer {
  name: string;
  dims: number[];
  type: InitializerType;
  data: Float32Array | Uint16Array | Int32Array | BigInt64Array;
}

/** A float32 graph input or output with a static shape. */
export interface OnnxValueInfo {
  name: string;
  dims: number[];
}

export interface OnnxModelSpec {
  nodes: OnnxNode[];
  initializers: OnnxInitializer[];
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
  return {
    name: v.name,
    type: { tensorType: { elemType: onnx.TensorProto.DataType.FLOAT, shape: { dim: v.dims.map((d) => ({ dimValue: d })) } } },
  };
}

/** Encodes a model (IR version 8, default domain at OPSET). */
export function encodeOnnxModel(spec: OnnxModelSpec): Uint8Array {
  const graph: onnxProto.onnx.IGraphProto = {
    name: 'main',
    node: spec.nodes.map((n) => ({
      name: n.name,
      opType: n.opType,
      input: n.inputs,
      output: n.outputs,
      attribute: Object.entries(n.attributes ?? {}).map(([k, v]) => attribute(k, v)),
    })),
    initializer: spec.initializers.map((t) => ({
      name: t.name,
      dims: t.dims,
      dataType: DATA_TYPES[t.type],
      rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
    })),
    input: spec.inputs.map(valueInfo),
    output: spec.outputs.map(valueInfo),
  };
  const model = onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: '', version: OPSET }],
    producerName: spec.producer,
    docString: spec.docString ?? '',
    metadataProps: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
    graph,
  });
  return onnx.ModelProto.encode(model).finish();
}
