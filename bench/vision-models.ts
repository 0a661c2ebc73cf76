/**
 * Vision model figures: conversion time, ONNX file size with fp16 and fp32
 * weights, fp16-vs-fp32 output difference, and CPU inference time (median
 * of 20 runs, 1 intra-op thread) per model. Converts into a scratch
 * directory; models/ is not touched.
 * Usage: node --import tsx bench/vision-models.ts
 */
import { cpus } from 'node:os';
import { convertTflite } from '../server/vision/tflite-to-onnx/convert.ts';
import { readManifest, readSource } from '../server/vision/models.ts';
import { OrtSession, type FloatTensor } from '../server/onnx/ort.ts';

const RUNS = 20;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function input(dims: number[]): FloatTensor {
  let s = 1;
  const data = Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  });
  return { data, dims };
}

const manifest = await readManifest();
console.log(`${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, node ${process.version}`);
console.log(
  '| model | TFLite bytes | convert ms (fp16) | ONNX fp16 bytes | ONNX fp32 bytes | max abs diff fp16 vs fp32 | CPU ms, 1 thread (median of 20) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const entry of manifest.models) {
  const source = await readSource(entry);
  const times: number[] = [];
  let half = convertTflite(source, { name: entry.id, weights: 'float16' });
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    half = convertTflite(source, { name: entry.id, weights: 'float16' });
    times.push(performance.now() - t0);
  }
  const full = convertTflite(source, { name: entry.id, weights: 'float32' });
  const feed = { [entry.onnx.inputs[0]!.name]: input(entry.onnx.inputs[0]!.shape) };
  const sessions = [await OrtSession.create(half.onnx, { threads: 1 }), await OrtSession.create(full.onnx, { threads: 1 })];
  const [a, b] = [await sessions[0]!.run(feed), await sessions[1]!.run(feed)];
  let diff = 0;
  for (const name of Object.keys(a)) {
    const x = a[name]!.data;
    const y = b[name]!.data;
    for (let i = 0; i < x.length; i++) diff = Math.max(diff, Math.abs(x[i]! - y[i]!));
  }
  const ms: number[] = [];
  for (let k = 0; k < RUNS + 2; k++) {
    const t0 = performance.now();
    await sessions[0]!.run(feed);
    if (k >= 2) ms.push(performance.now() - t0);
  }
  for (const s of sessions) await s.release();
  console.log(
    `| ${entry.id} | ${source.byteLength} | ${median(times).toFixed(0)} | ${half.onnx.byteLength} | ${full.onnx.byteLength} | ${diff} | ${median(ms).toFixed(1)} |`,
  );
}
