/**
 * A reader for the safetensors format (an 8-byte little-endian header length,
 * a JSON header naming each tensor's dtype, shape and byte range, then the
 * raw little-endian data). The header is read and checked without touching
 * the data; tensors are read one at a time, so a 2 GB file never has to be in
 * memory at once.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { bf16ToFloat32, f16ToFloat32, float32ToBf16, float32ToF16 } from '../../onnx/half.ts';

/** Element types the reader understands. */
export type SafetensorsDtype = 'F32' | 'F16' | 'BF16' | 'F64' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';

const DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = {
  F64: 8,
  I64: 8,
  F32: 4,
  I32: 4,
  F16: 2,
  BF16: 2,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** One tensor's entry in the header; offsets are relative to the start of the data. */
export interface TensorEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  begin: number;
  end: number;
}

/** The parsed header of a safetensors file. */
export interface SafetensorsHeader {
  tensors: Map<string, TensorEntry>;
  metadata: Record<string, string>;
  /** Byte offset of the data section in the file. */
  dataStart: number;
  fileBytes: number;
}

/** A file that is not valid safetensors; the message says where it is wrong. */
export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

const MAX_HEADER_BYTES = 100 * 1024 * 1024;

function isDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(DTYPE_BYTES, value);
}

/** Parses and checks a header: known dtypes, byte ranges that match the shapes and tile the data exactly. */
export function parseHeader(json: string, dataStart: number, fileBytes: number): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new SafetensorsError(`the header is not JSON (${(error as Error).message})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new SafetensorsError('the header is not a JSON object');
  const tensors = new Map<string, TensorEntry>();
  let metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = Object.fromEntries(Object.entries((value ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
      continue;
    }
    const entry = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (!isDtype(entry?.dtype)) throw new SafetensorsError(`tensor ${name}: unknown dtype ${String(entry?.dtype)}`);
    const shape = entry.shape;
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new SafetensorsError(`tensor ${name}: shape ${JSON.stringify(shape)} is not a list of sizes`);
    }
    const offsets = entry.data_offsets;
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      throw new SafetensorsError(`tensor ${name}: data_offsets ${JSON.stringify(offsets)} are not [begin, end]`);
    }
    const [begin, end] = offsets as [number, number];
    const expected = (shape as number[]).reduce((a, b) => a * b, 1) * DTYPE_BYTES[entry.dtype];
    if (end - begin !== expected) {
      throw new SafetensorsError(`tensor ${name}: ${end - begin} bytes for ${entry.dtype}[${shape.join(',')}], expected ${expected}`);
    }
    tensors.set(name, { name, dtype: entry.dtype, shape: shape as number[], begin, end });
  }
  const sorted = [...tensors.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let cursor = 0;
  for (const t of sorted) {
    if (t.begin !== cursor) {
      throw new SafetensorsError(`tensor ${t.name} starts at byte ${t.begin} of the data, expected ${cursor} (gap or overlap)`);
    }
    cursor = t.end;
  }
  if (dataStart + cursor !== fileBytes) {
    throw new SafetensorsError(`the tensors cover ${cursor} bytes but the file has ${fileBytes - dataStart} after the header`);
  }
  return { tensors, metadata, dataStart, fileBytes };
}

/** An open safetensors file: its checked header and reads of single tensors. */
export class SafetensorsFile {
  readonly path: string;
  readonly header: SafetensorsHeader;
  private handle: FileHandle | null;

  private constructor(path: string, handle: FileHandle, header: SafetensorsHeader) {
    this.path = path;
    this.handle = handle;
    this.header = header;
  }

  /** Opens a file and checks its header (nothing else is read). */
  static async open(path: string): Promise<SafetensorsFile> {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      if (size < 8) throw new SafetensorsError(`${path}: ${size} bytes is too short for a safetensors file`);
      const prefix = Buffer.alloc(8);
      await handle.read(prefix, 0, 8, 0);
      const length = prefix.readBigUInt64LE(0);
      if (length > BigInt(Math.min(MAX_HEADER_BYTES, size - 8))) {
        throw new SafetensorsError(`${path}: header length ${length} does not fit the file (${size} bytes)`);
      }
      const headerBytes = Buffer.alloc(Number(length));
      await handle.read(headerBytes, 0, headerBytes.length, 8);
      const header = parseHeader(headerBytes.toString('utf8'), 8 + headerBytes.length, size);
      return new SafetensorsFile(path, handle, header);
    } catch (error) {
      await handle.close();
      if (error instanceof SafetensorsError && !error.message.startsWith(path)) throw new SafetensorsError(`${path}: ${error.message}`);
      throw error;
    }
  }

  /** A tensor's header entry, or throws naming it. */
  entry(name: string): TensorEntry {
    const entry = this.header.tensors.get(name);
    if (!entry) throw new SafetensorsError(`${this.path}: no tensor ${name}`);
    return entry;
  }

  /** A tensor's raw little-endian bytes. */
  async bytes(name: string): Promise<Uint8Array> {
    const entry = this.entry(name);
    const handle = this.live();
    const out = new Uint8Array(entry.end - entry.begin);
    let done = 0;
    while (done < out.length) {
      const { bytesRead } = await handle.read(out, done, out.length - done, this.header.dataStart + entry.begin + done);
      if (bytesRead === 0) throw new SafetensorsError(`${this.path}: tensor ${name} ends early`);
      done += bytesRead;
    }
    return out;
  }

  /** A floating-point tensor as float32 values (bf16 and fp16 widen exactly). */
  async float32(name: string): Promise<Float32Array> {
    const entry = this.entry(name);
    const bytes = await this.bytes(name);
    const aligned = bytes.buffer;
    switch (entry.dtype) {
      case 'F32':
        return new Float32Array(aligned, 0, bytes.length / 4);
      case 'F16':
        return f16ToFloat32(new Uint16Array(aligned, 0, bytes.length / 2));
      case 'BF16':
        return bf16ToFloat32(new Uint16Array(aligned, 0, bytes.length / 2));
      case 'F64':
        return Float32Array.from(new Float64Array(aligned, 0, bytes.length / 8));
      default:
        throw new SafetensorsError(`${this.path}: tensor ${name} is ${entry.dtype}, not a float`);
    }
  }

  /** Closes the file. Idempotent. */
  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }

  private live(): FileHandle {
    if (!this.handle) throw new SafetensorsError(`${this.path}: file closed`);
    return this.handle;
  }
}

/** A tensor to write with `encodeSafetensors`. */
export interface TensorToWrite {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16';
  shape: number[];
  /** float32 values (converted to the dtype) */
  values: Float32Array;
}

/** Encodes tensors as a safetensors file (used to write test models and tiny fixtures). */
export function encodeSafetensors(tensors: readonly TensorToWrite[], metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: metadata };
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const t of tensors) {
    let data: Uint8Array;
    if (t.dtype === 'F32') data = new Uint8Array(Float32Array.from(t.values).buffer);
    else if (t.dtype === 'F16') data = new Uint8Array(float32ToF16(t.values).buffer);
    else {
      data = new Uint8Array(float32ToBf16(t.values).buffer);
    }
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + data.length] };
    parts.push(data);
    offset += data.length;
  }
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const headerBytes = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
