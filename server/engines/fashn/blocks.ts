/**
 * The building blocks of the FASHN VTON network as ONNX subgraphs, each a
 * function that adds nodes to an OnnxGraph and returns the name of its
 * result. Activations are [batch, tokens, hidden] unless a doc comment says
 * otherwise; weights are named by their checkpoint tensor names.
 */
import type { OnnxGraph } from '../../onnx/graph.ts';
import { MS_DOMAIN } from '../../onnx/writer.ts';

/** How attention is computed: ONNX Runtime's fused MultiHeadAttention (flash attention on CUDA) or plain MatMul/Softmax. */
export type AttentionKind = 'fused' | 'plain';

/** A Linear layer: x·Wᵀ + b, with W stored transposed for MatMul. */
export function linear(g: OnnxGraph, x: string, prefix: string, inputs: number, outputs: number, bias = true): string {
  const y = g.op('MatMul', [x, g.weight(`${prefix}.weight`, [inputs, outputs], true)]);
  return bias ? g.op('Add', [y, g.weight(`${prefix}.bias`, [outputs])]) : y;
}

/** SiLU: x·σ(x). */
export function silu(g: OnnxGraph, x: string): string {
  return g.op('Mul', [x, g.op('Sigmoid', [x])]);
}

/** GELU with the tanh approximation (PyTorch's approximate="tanh"). */
export function geluTanh(g: OnnxGraph, x: string): string {
  const cube = g.op('Mul', [g.op('Mul', [x, x]), x]);
  const inner = g.op('Mul', [g.op('Add', [x, g.op('Mul', [cube, g.scalar(0.044715)])]), g.scalar(Math.sqrt(2 / Math.PI))]);
  const half = g.op('Mul', [x, g.scalar(0.5)]);
  return g.op('Mul', [half, g.op('Add', [g.op('Tanh', [inner]), g.scalar(1)])]);
}

/** LayerNorm over the last axis without affine parameters (eps 1e-6), computed in float32 inside the op. */
export function layerNorm(g: OnnxGraph, x: string, size: number): string {
  return g.op('LayerNormalization', [x, g.constant(new Float32Array(size).fill(1), [size])], {
    axis: -1,
    epsilon: { float: 1e-6 },
    stash_type: 1,
  });
}

/** RMSNorm over the last axis (eps 1e-6), in float32 as the reference does, then scaled. */
export function rmsNorm(g: OnnxGraph, x: string, scale: string): string {
  const x32 = g.compute === 'float32' ? x : g.cast(x, 'float32');
  const meanSquare = g.op('ReduceMean', [g.op('Mul', [x32, x32])], { axes: [-1], keepdims: 1 });
  const rrms = g.op('Reciprocal', [g.op('Sqrt', [g.op('Add', [meanSquare, g.constant32([1e-6], [])])])]);
  const normed = g.op('Mul', [x32, rrms]);
  return g.op('Mul', [g.compute === 'float32' ? normed : g.cast(normed, g.compute), scale]);
}

/** Splits `x` along the last axis into `count` equal parts. */
export function chunk(g: OnnxGraph, x: string, count: number, size: number): string[] {
  return g.ops('Split', [x, g.ints(new Array<number>(count).fill(size))], count, { axis: -1 });
}

/** shift, scale and gate vectors of a Modulation: Linear(SiLU(vec)) as [B, 1, n·hidden] split in n. */
export function modulation(g: OnnxGraph, vecSilu: string, prefix: string, hidden: number, count: 3 | 6): string[] {
  const out = linear(g, vecSilu, `${prefix}.lin`, hidden, count * hidden);
  return chunk(g, g.op('Unsqueeze', [out, g.ints([1])]), count, hidden);
}

/** (1 + scale)·x + shift. */
export function modulate(g: OnnxGraph, x: string, shift: string, scale: string): string {
  return g.op('Add', [g.op('Mul', [x, g.op('Add', [scale, g.scalar(1)])]), shift]);
}

/** [B, L, heads·headDim] → [B, heads, L, headDim]. */
export function splitHeads(g: OnnxGraph, x: string, heads: number, headDim: number): string {
  return g.op('Transpose', [g.op('Reshape', [x, g.ints([0, 0, heads, headDim])])], { perm: [0, 2, 1, 3] });
}

/** [B, heads, L, headDim] → [B, L, heads·headDim]. */
export function mergeHeads(g: OnnxGraph, x: string, hidden: number): string {
  return g.op('Reshape', [g.op('Transpose', [x], { perm: [0, 2, 1, 3] }), g.ints([0, 0, hidden])]);
}

/** A Linear to q, k, v split into heads ([B, H, L, D] each), with q and k RMS-normalised. */
export function qkv(
  g: OnnxGraph,
  x: string,
  prefix: string,
  normPrefix: string,
  dims: { hidden: number; heads: number; headDim: number },
  bias: boolean,
): [string, string, string] {
  const projected = linear(g, x, prefix, dims.hidden, 3 * dims.hidden, bias);
  const [q, k, v] = chunk(g, projected, 3, dims.hidden).map((part) => splitHeads(g, part, dims.heads, dims.headDim)) as [
    string,
    string,
    string,
  ];
  const scale = (name: string): string => g.weight(`${normPrefix}.${name}.scale`, [dims.headDim]);
  return [rmsNorm(g, q, scale('query_norm')), rmsNorm(g, k, scale('key_norm')), v];
}

/** Rotary tables for `apply_rope`, one row per token: cos on both elements of a pair, and (−sin, +sin). */
export interface RopeTables {
  cos: Float32Array;
  sin: Float32Array;
  tokens: number;
  headDim: number;
}

/**
 * The reference's EmbedND for tokens on a gridH×gridW grid, ids (0, row,
 * column) in row-major order: pair k of axis a turns by position·θ^(−2k/dₐ).
 * Computed in float64 and stored in float32, as the reference does.
 */
export function ropeTables(gridH: number, gridW: number, axesDim: readonly number[], theta: number): RopeTables {
  const headDim = axesDim.reduce((a, b) => a + b, 0);
  const tokens = gridH * gridW;
  const cos = new Float32Array(tokens * headDim);
  const sin = new Float32Array(tokens * headDim);
  for (let row = 0; row < gridH; row++) {
    for (let col = 0; col < gridW; col++) {
      const token = row * gridW + col;
      const ids = [0, row, col];
      let pair = 0;
      axesDim.forEach((dim, axis) => {
        for (let k = 0; k < dim / 2; k++, pair++) {
          const angle = ids[axis]! * (1 / theta ** ((2 * k) / dim));
          const at = token * headDim + 2 * pair;
          cos[at] = cos[at + 1] = Math.cos(angle);
          sin[at] = -Math.sin(angle);
          sin[at + 1] = Math.sin(angle);
        }
      });
    }
  }
  return { cos, sin, tokens, headDim };
}

/** The same tables for a sequence made of `copies` streams with the same positions (joint attention). */
export function repeatTables(tables: RopeTables, copies: number): RopeTables {
  const cos = new Float32Array(tables.cos.length * copies);
  const sin = new Float32Array(tables.sin.length * copies);
  for (let c = 0; c < copies; c++) {
    cos.set(tables.cos, c * tables.cos.length);
    sin.set(tables.sin, c * tables.sin.length);
  }
  return { cos, sin, tokens: tables.tokens * copies, headDim: tables.headDim };
}

/** Graph constants for rotary tables (created once per sequence length). */
export interface RopeConstants {
  cos: string;
  sin: string;
  headDim: number;
}

export function ropeConstants(g: OnnxGraph, tables: RopeTables): RopeConstants {
  const dims = [tables.tokens, tables.headDim];
  return { cos: g.constant(tables.cos, dims), sin: g.constant(tables.sin, dims), headDim: tables.headDim };
}

/** Rotates each (even, odd) pair of the last axis of [B, H, L, D]: (a·cos − b·sin, a·sin + b·cos). */
export function applyRope(g: OnnxGraph, x: string, rope: RopeConstants): string {
  const pairs = g.op('Reshape', [x, g.ints([0, 0, 0, rope.headDim / 2, 2])]);
  const [even, odd] = g.ops('Split', [pairs, g.ints([1, 1])], 2, { axis: -1 }) as [string, string];
  const swapped = g.op('Reshape', [g.op('Concat', [odd, even], { axis: -1 }), g.ints([0, 0, 0, rope.headDim])]);
  return g.op('Add', [g.op('Mul', [x, rope.cos]), g.op('Mul', [swapped, rope.sin])]);
}

/** Softmax(q·kᵀ/√D)·v for q, k, v of [B, H, L, D] (rotary applied to q and k first); returns [B, L, H·D]. */
export function attention(
  g: OnnxGraph,
  q: string,
  k: string,
  v: string,
  rope: RopeConstants,
  dims: { hidden: number; heads: number; headDim: number },
  kind: AttentionKind,
): string {
  const qr = applyRope(g, q, rope);
  const kr = applyRope(g, k, rope);
  if (kind === 'fused') {
    return g.op(
      'MultiHeadAttention',
      [mergeHeads(g, qr, dims.hidden), mergeHeads(g, kr, dims.hidden), mergeHeads(g, v, dims.hidden)],
      { num_heads: dims.heads },
      MS_DOMAIN,
    );
  }
  const scores = g.op('Mul', [
    g.op('MatMul', [qr, g.op('Transpose', [kr], { perm: [0, 1, 3, 2] })]),
    g.scalar(1 / Math.sqrt(dims.headDim)),
  ]);
  return mergeHeads(g, g.op('MatMul', [g.op('Softmax', [scores], { axis: -1 }), v]), dims.hidden);
}
