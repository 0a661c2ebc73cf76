/**
 * Constant tensors as the converter handles them: fp16 weights stay fp16
 * (raw half-precision bits) until the writer decides, so layout changes and
 * densification work on any element type.
 */
import type { Sparsity, TfliteTensor } from './tflite-model.ts';

export type ConstData = Float32Array | Uint16Array | Int32Array;

/** A constant: dims, element type and data (`float16` data holds raw half bits). */
export interface ConstTensor {
  dims: number[];
  type: 'float32' | 'float16' | 'int32';
  data: ConstData;
}

/** Number of elements of a shape. */
export function sizeOf(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** Half-precision bits to a number (exact). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** A number to half-precision bits (round to nearest even); used to build fp16 test weights. */
export function floatToHalf(value: number): number {
  const f32 = new Float32Array([value]);
  const bits = new Uint32Array(f32.buffer)[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  let mantissa = bits & 0x7fffff;
  if (exponent >= 31) return sign | 0x7c00 | (Number.isNaN(value) ? 0x200 : 0);
  if (exponent <= 0) {
    if (exponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - exponent;
    const half = mantissa >> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (half + (rest > midpoint || (rest === midpoint && half & 1) ? 1 : 0));
  }
  const half = (exponent << 10) | (mantissa >> 13);
  const rest = mantissa & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

/** A constant converted to fp32 values. */
export function toFloat32(c: ConstTensor): Float32Array {
  if (c.type === 'float32') return c.data as Float32Array;
  if (c.type === 'int32') return Float32Array.from(c.data);
  return Float32Array.from(c.data as Uint16Array, halfToFloat);
}

/** The raw (possibly still sparse) contents of a constant TFLite tensor, copied to aligned memory. */
export function readConst(tensor: TfliteTensor): ConstTensor {
  if (!tensor.data) throw new Error(`tensor ${tensor.name} is not a constant`);
  if (tensor.quantized) throw new Error(`tensor ${tensor.name} is quantized (int8/uint8 weights are not supported)`);
  const bytes = tensor.data.slice();
  switch (tensor.type) {
    case 'float32':
      return { dims: tensor.shape, type: 'float32', data: new Float32Array(bytes.buffer) };
    case 'float16':
      return { dims: tensor.shape, type: 'float16', data: new Uint16Array(bytes.buffer) };
    case 'int32':
      return { dims: tensor.shape, type: 'int32', data: new Int32Array(bytes.buffer) };
    default:
      throw new Error(`tensor ${tensor.name}: constants of type ${tensor.type} are not supported`);
  }
}

/**
 * Expands a sparse constant to dense, following TFLite's FormatConverter:
 * the traversal order walks original dims then block dims; DENSE levels
 * enumerate, SPARSE_CSR levels read segments and indices.
 */
export function densify(values: ConstTensor, shape: readonly number[], sparsity: Sparsity): ConstTensor {
  const rank = shape.length;
  const levels = sparsity.traversalOrder.length;
  const out = new (values.data.constructor as new (n: number) => ConstData)(sizeOf(shape));
  const index = new Array<number>(levels).fill(0);
  const blockSize = (block: number): number => sparsity.dimensions[sparsity.traversalOrder.indexOf(rank + block)]!.denseSize;
  let consumed = 0;
  const visit = (level: number, previous: number): void => {
    if (level === levels) {
      let offset = 0;
      for (let d = 0; d < rank; d++) {
        let v = index[d]!;
        const block = sparsity.blockMap.indexOf(d);
        if (block >= 0) v = v * blockSize(block) + index[rank + block]!;
        offset = offset * shape[d]! + v;
      }
      out[offset] = values.data[consumed++]!;
      return;
    }
    const dim = sparsity.dimensions[level]!;
    const axis = sparsity.traversalOrder[level]!;
    if (dim.format === 'DENSE') {
      for (let j = 0; j < dim.denseSize; j++) {
        index[axis] = j;
        visit(level + 1, previous * dim.denseSize + j);
      }
    } else {
      for (let j = dim.segments[previous]!; j < dim.segments[previous + 1]!; j++) {
        index[axis] = dim.indices[j]!;
        visit(level + 1, j);
      }
    }
  };
  visit(0, 0);
  if (consumed !== values.data.length) throw new Error(`densify used ${consumed} of ${values.data.length} values`);
  return { dims: [...shape], type: values.type, data: out };
}

/** Permutes the axes of a constant (like ONNX Transpose with `perm`). */
export function permute(c: ConstTensor, perm: readonly number[]): ConstTensor {
  const rank = c.dims.length;
  const dims = perm.map((p) => c.dims[p]!);
  const inStrides = new Array<number>(rank);
  for (let d = rank - 1, s = 1; d >= 0; d--) {
    inStrides[d] = s;
    s *= c.dims[d]!;
  }
  const strides = perm.map((p) => inStrides[p]!);
  const out = new (c.data.constructor as new (n: number) => ConstData)(c.data.length);
  const idx = new Array<number>(rank).fill(0);
  for (let o = 0; o < out.length; o++) {
    let src = 0;
    for (let d = 0; d < rank; d++) src += idx[d]! * strides[d]!;
    out[o] = c.data[src]!;
    for (let d = rank - 1; d >= 0; d--) {
      if (++idx[d]! < dims[d]!) break;
      idx[d] = 0;
    }
  }
  return { dims, type: c.type, data: out };
}
