/**
 * Conversions between float32 and the 16-bit float formats of model files:
 * IEEE half (fp16) and bfloat16 (the top half of an fp32).
 */

/** Converts bfloat16 bits to float32 (exact: bf16 is the top half of an fp32). */
export function bf16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bits[i]! << 16;
  return new Float32Array(out.buffer);
}

/** Converts IEEE half bits to float32 (exact). */
export function f16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const fraction = h & 0x3ff;
    if (exponent === 0) out[i] = sign * fraction * 2 ** -24;
    else if (exponent === 31) out[i] = fraction ? NaN : sign * Infinity;
    else out[i] = sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
  }
  return out;
}

const F32_SCRATCH = new Float32Array(1);
const U32_SCRATCH = new Uint32Array(F32_SCRATCH.buffer);

/** Rounds float32 values to IEEE half bits (round to nearest even; overflow to ±Infinity). */
export function float32ToF16(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    F32_SCRATCH[0] = values[i]!;
    const x = U32_SCRATCH[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exponent = (x >>> 23) & 0xff;
    let mantissa = x & 0x7fffff;
    if (exponent === 0xff) {
      out[i] = sign | 0x7c00 | (mantissa ? 0x200 : 0);
      continue;
    }
    const e = exponent - 127 + 15;
    if (e >= 31) {
      out[i] = sign | 0x7c00;
      continue;
    }
    if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      mantissa |= 0x800000;
      const shift = 14 - e;
      let half = mantissa >>> shift;
      const rest = mantissa & ((1 << shift) - 1);
      const midpoint = 1 << (shift - 1);
      if (rest > midpoint || (rest === midpoint && half & 1)) half++;
      out[i] = sign | half;
      continue;
    }
    let half = (e << 10) | (mantissa >>> 13);
    const rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
    out[i] = sign | half;
  }
  return out;
}

/** Rounds float32 values to bfloat16 bits (round to nearest even). */
export function float32ToBf16(values: Float32Array): Uint16Array {
  const bits = new Uint32Array(Float32Array.from(values).buffer);
  const out = new Uint16Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const x = bits[i]!;
    out[i] = (x + 0x7fff + ((x >>> 16) & 1)) >>> 16;
  }
  return out;
}
