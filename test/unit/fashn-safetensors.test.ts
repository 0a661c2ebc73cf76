/** server/engines/fashn: the safetensors reader and the architecture checker. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  FASHN_VTON_15,
  checkHeader,
  describeReport,
  expectedTensors,
  parameterCount,
  validateConfig,
} from '../../server/engines/fashn/architecture.ts';
import { SafetensorsError, SafetensorsFile, encodeSafetensors, parseHeader } from '../../server/engines/fashn/safetensors.ts';
import { bf16ToFloat32, f16ToFloat32, float32ToF16 } from '../../server/onnx/half.ts';
import { TINY, randomWeights } from '../helpers/fashn-tiny.ts';

const dir = mkdtempSync(join(tmpdir(), 'fashn-st-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function headerOf(tensors: Record<string, unknown>, dataBytes: number): ReturnType<typeof parseHeader> {
  return parseHeader(JSON.stringify(tensors), 0, dataBytes);
}

test('the published configuration has the 972M parameters of the model card and 366 tensors', () => {
  validateConfig(FASHN_VTON_15);
  validateConfig(TINY);
  assert.equal(parameterCount(FASHN_VTON_15), 971_814_240);
  assert.equal(expectedTensors(FASHN_VTON_15).length, 366);
  assert.throws(() => validateConfig({ ...TINY, axesDim: [4, 6, 8] }), /sums to 18, not the head size 16/);
});

test('a written file reads back: header, metadata, F32/F16/BF16 values', async () => {
  const values = Float32Array.of(1, -2.5, 0.1, 65504, 3e-6, -0);
  const bytes = encodeSafetensors(
    [
      { name: 'a', dtype: 'F32', shape: [2, 3], values },
      { name: 'b', dtype: 'F16', shape: [6], values },
      { name: 'c', dtype: 'BF16', shape: [3, 2], values },
    ],
    { format: 'pt' },
  );
  const path = join(dir, 'three.safetensors');
  writeFileSync(path, bytes);
  const file = await SafetensorsFile.open(path);
  try {
    assert.deepEqual(file.header.metadata, { format: 'pt' });
    assert.deepEqual(file.entry('a').shape, [2, 3]);
    assert.equal(file.entry('b').dtype, 'F16');
    assert.deepEqual([...(await file.float32('a'))], [...values]);
    const half = await file.float32('b');
    // fp16 keeps 11 significant bits: 0.1 → 0.0999755859375, 3e-6 is subnormal.
    assert.deepEqual([...half].slice(0, 4), [1, -2.5, 0.0999755859375, 65504]);
    assert.ok(Math.abs(half[4]! - 3e-6) < 6e-8);
    const brain = await file.float32('c');
    assert.deepEqual([...brain].slice(0, 2), [1, -2.5]);
    assert.ok(Math.abs(brain[2]! - 0.1) < 0.001 && brain[2] !== Math.fround(0.1));
    await assert.rejects(file.float32('nope'), /no tensor nope/);
  } finally {
    await file.close();
  }
});

test('fp16 and bf16 conversions match hand-computed bit patterns', () => {
  assert.deepEqual(
    [...float32ToF16(Float32Array.of(1, -2, 0.5, 65504, 65520, 1e-8, 5.960464477539063e-8))],
    [0x3c00, 0xc000, 0x3800, 0x7bff, 0x7c00, 0, 1],
  );
  assert.deepEqual([...f16ToFloat32(Uint16Array.of(0x3c00, 0xc000, 0x0001, 0x7c00))], [1, -2, 2 ** -24, Infinity]);
  assert.deepEqual([...bf16ToFloat32(Uint16Array.of(0x3f80, 0xc020))], [1, -2.5]);
  // Round to nearest even at the halfway point between 1 and 1 + 2^-10.
  assert.equal(float32ToF16(Float32Array.of(1 + 2 ** -11))[0], 0x3c00);
  assert.equal(float32ToF16(Float32Array.of(1 + 3 * 2 ** -11))[0], 0x3c02);
});

test('malformed headers are refused with the tensor named', async () => {
  assert.throws(() => parseHeader('[1]', 0, 0), /not a JSON object/);
  assert.throws(() => headerOf({ w: { dtype: 'F8', shape: [1], data_offsets: [0, 1] } }, 1), /tensor w: unknown dtype F8/);
  assert.throws(() => headerOf({ w: { dtype: 'F32', shape: [2], data_offsets: [0, 4] } }, 4), /tensor w: 4 bytes for F32\[2\], expected 8/);
  assert.throws(
    () => headerOf({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] }, b: { dtype: 'F32', shape: [1], data_offsets: [8, 12] } }, 12),
    /tensor b starts at byte 8 of the data, expected 4/,
  );
  assert.throws(() => headerOf({ a: { dtype: 'F32', shape: [1], data_offsets: [0, 4] } }, 8), /cover 4 bytes but the file has 8/);
  const path = join(dir, 'short.safetensors');
  writeFileSync(path, Buffer.from([255, 255, 0, 0, 0, 0, 0, 0, 123]));
  await assert.rejects(
    SafetensorsFile.open(path),
    (error: Error) => error instanceof SafetensorsError && /short\.safetensors: header length 65535/.test(error.message),
  );
});

test('the checker accepts the architecture and names what is missing, misshapen, mistyped or unexpected', async () => {
  const tensors = randomWeights(TINY, 3);
  const path = join(dir, 'tiny.safetensors');
  writeFileSync(path, encodeSafetensors(tensors));
  const good = await SafetensorsFile.open(path);
  const report = checkHeader(good.header, TINY);
  await good.close();
  assert.deepEqual(report, { missing: [], unexpected: [], wrongShape: [], wrongDtype: [] });
  assert.equal(describeReport(report, tensors.length), null);

  const broken = tensors
    .filter((t) => t.name !== 'single_blocks.0.linear2.bias')
    .map((t) => (t.name === 'y_embedder.weight' ? { ...t, shape: [3, 32], values: t.values.subarray(0, 96) } : t));
  broken.push({ name: 'extra.weight', dtype: 'F32', shape: [1], values: Float32Array.of(0) });
  writeFileSync(path, encodeSafetensors(broken));
  const bad = await SafetensorsFile.open(path);
  const badReport = checkHeader(bad.header, TINY);
  await bad.close();
  const text = describeReport(badReport, tensors.length);
  assert.equal(
    text,
    `1 of ${tensors.length} tensors missing (single_blocks.0.linear2.bias [32]); ` +
      '1 with the wrong shape (y_embedder.weight is [3,32], expected [4,32]); 1 unexpected (extra.weight)',
  );
  const typed = checkHeader(headerOf({ 'y_embedder.weight': { dtype: 'I32', shape: [4, 32], data_offsets: [0, 512] } }, 512), TINY);
  assert.deepEqual(typed.wrongDtype, [{ name: 'y_embedder.weight', found: 'I32' }]);
  assert.match(describeReport(typed, 1) ?? '', /not BF16\/F16\/F32 \(y_embedder\.weight is I32\)/);
});

test('the full architecture checked against the tiny checkpoint names five missing tensors and counts the rest', async () => {
  const path = join(dir, 'tiny-vs-full.safetensors');
  writeFileSync(path, encodeSafetensors(randomWeights(TINY, 1)));
  const file = await SafetensorsFile.open(path);
  const report = checkHeader(file.header, FASHN_VTON_15);
  await file.close();
  assert.ok(report.missing.some((t) => t.name === 'double_blocks.7.txt_mlp.2.bias'));
  assert.match(describeReport(report, 366) ?? '', /tensors missing \(.*and \d+ more\)/);
});
