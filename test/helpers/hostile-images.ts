/**
 * A corpus of hostile image inputs, built in memory (sharp and Buffer
 * surgery, no files written, no network) with the problem each must produce.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import type { ImageFormat } from '../../server/engines/types.ts';

/** One hostile input: `status` 0 and `code` '' mean the image must be accepted. */
export interface HostileCase {
  name: string;
  /** What goes into the JSON image field. */
  value: string;
  status: number;
  code: string;
  /** Text that must not survive normalization (accepted polyglots only). */
  payload?: string;
}

const FIXTURES = new URL('../../../shared/fixtures/people/', import.meta.url);

function fixtureJpeg(): Buffer | null {
  try {
    if (!existsSync(FIXTURES)) return null;
    const name = readdirSync(FIXTURES)
      .filter((file) => file.toLowerCase().endsWith('.jpg'))
      .sort()[0];
    return name === undefined ? null : readFileSync(new URL(name, FIXTURES));
  } catch {
    return null;
  }
}

/** A gradient with seeded noise, so that encoders see something photo-like. */
function syntheticRgb(width: number, height: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  let seed = 0x2545f491;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      const noise = (seed >>> 24) % 32;
      const i = (y * width + x) * 3;
      pixels[i] = Math.min(255, Math.floor((255 * x) / width) + noise);
      pixels[i + 1] = Math.min(255, Math.floor((255 * y) / height) + noise);
      pixels[i + 2] = Math.min(255, 128 + noise);
    }
  }
  return pixels;
}

function photo(width: number, height: number): Sharp {
  const fixture = fixtureJpeg();
  if (fixture !== null) return sharp(fixture).resize(width, height, { fit: 'cover' });
  return sharp(syntheticRgb(width, height), { raw: { width, height, channels: 3 } });
}

/** A real, photo-like image of exactly `width`×`height` in `format`. */
export async function validImage(format: ImageFormat, width: number, height: number): Promise<Buffer> {
  const image = photo(width, height);
  if (format === 'png') return image.png().toBuffer();
  if (format === 'webp') return image.webp({ quality: 85 }).toBuffer();
  return image.jpeg({ quality: 90 }).toBuffer();
}

/**
 * A real photo-like JPEG of exactly `width`×`height`: a people fixture from
 * ../shared/fixtures when present, a generated gradient with noise otherwise.
 */
export async function validJpeg(width: number, height: number): Promise<Buffer> {
  return validImage('jpeg', width, height);
}

/** One people fixture as it is on disk (a drawn 768×1024 JPEG without ../shared), with its size. */
export async function fixturePhoto(): Promise<{ bytes: Buffer; width: number; height: number }> {
  const fixture = join(import.meta.dirname, '../../../shared/fixtures/people/dresscode_052767_0.jpg');
  const bytes = existsSync(fixture) ? readFileSync(fixture) : await validJpeg(768, 1024);
  const { width, height } = await sharp(bytes).metadata();
  return { bytes, width: width!, height: height! };
}

function b64(bytes: Buffer): string {
  return bytes.toString('base64');
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG header claiming `width`×`height` RGB with a small run of zeros as IDAT. */
function handmadePng(width: number, height: number, zeroBytes: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(Buffer.alloc(zeroBytes), { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Inserts `chunk` right after a PNG's IHDR chunk. */
function insertPngChunk(png: Buffer, chunk: Buffer): Buffer {
  const afterIhdr = 8 + 8 + 13 + 4;
  return Buffer.concat([png.subarray(0, afterIhdr), chunk, png.subarray(afterIhdr)]);
}

/** Offset of the first SOF0/SOF2 segment's length field, found by walking segments. */
function jpegSofOffset(jpeg: Buffer): number {
  let pos = 2;
  while (pos + 4 <= jpeg.length) {
    const marker = jpeg[pos + 1]!;
    if (marker === 0xc0 || marker === 0xc2) return pos + 2;
    pos += 2 + jpeg.readUInt16BE(pos + 2);
  }
  throw new Error('no SOF segment in generated JPEG');
}

function withJpegSize(jpeg: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(jpeg);
  const sof = jpegSofOffset(copy);
  copy.writeUInt16BE(height, sof + 3);
  copy.writeUInt16BE(width, sof + 5);
  return copy;
}

function jpegSegment(marker: number, payload: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([head, payload]);
}

/** Inserts segments right after SOI. */
function insertJpegSegments(jpeg: Buffer, segments: Buffer[]): Buffer {
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

/** An APP1 Exif block of the largest legal size: orientation 1, then padding. */
function hugeExif(filler: string): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write('II*\0', 0, 'latin1');
  tiff.writeUInt32LE(8, 4);
  tiff.writeUInt16LE(1, 8);
  tiff.writeUInt16LE(0x0112, 10);
  tiff.writeUInt16LE(3, 12);
  tiff.writeUInt32LE(1, 14);
  tiff.writeUInt16LE(1, 18);
  const head = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const padding = Buffer.alloc(65533 - head.length, filler, 'latin1');
  return jpegSegment(0xe1, Buffer.concat([head, padding]));
}

/** A one-file, stored (uncompressed) ZIP archive. */
function tinyZip(name: string, content: string): Buffer {
  const file = Buffer.from(name, 'latin1');
  const data = Buffer.from(content, 'latin1');
  const crc = crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(file.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(file.length, 28);
  const centralOffset = local.length + file.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + file.length, 12);
  end.writeUInt32LE(centralOffset, 16);
  return Buffer.concat([local, file, data, central, file, end]);
}

function bmp(width: number, height: number): Buffer {
  const rowBytes = Math.ceil((width * 3) / 4) * 4;
  const header = Buffer.alloc(54);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(54 + rowBytes * height, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(height, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  return Buffer.concat([header, Buffer.alloc(rowBytes * height, 0x80)]);
}

const INVALID = { status: 422, code: 'invalid_image' };
const UNSUPPORTED = { status: 415, code: 'unsupported_media_type' };
const ACCEPTED = { status: 0, code: '' };

/** Every hostile case with the problem status and code it must produce. */
export async function hostileCorpus(): Promise<HostileCase[]> {
  const jpeg = await validJpeg(512, 640);
  const png = await validImage('png', 320, 400);
  const webp = await validImage('webp', 320, 400);
  const rgb = photo(300, 300);
  const gif = await rgb.clone().gif().toBuffer();
  const tiff = await rgb.clone().tiff().toBuffer();
  const tiny = await validJpeg(10, 10);

  const zipPayload = 'FR-POLYGLOT-ZIP-PAYLOAD';
  const htmlPayload = '<script>alert("FR-POLYGLOT-HTML")</script>';
  const textPayload = '<script>alert("FR-PNG-TEXT-CHUNK")</script>';
  const exifPayload = 'FR-EXIF-FILLER-';
  const appSegments = Array.from({ length: 600 }, (_, i) => {
    const markers = [0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xef];
    return jpegSegment(markers[i % markers.length]!, Buffer.alloc(200, `FRAPP${i}`, 'latin1'));
  });
  const oversizedApp = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xe5, 0xff, 0xf0]), Buffer.alloc(64)]);
  const oversizedBase64 = 'A'.repeat(Math.ceil((15 * 1024 * 1024) / 3) * 4 + 8);
  const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512"><rect width="512" height="512"/></svg>';
  const html = '<!doctype html><html><body><script>alert(1)</script></body></html>';
  const pdf = '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n';
  const riffUnknown = Buffer.concat([webp.subarray(0, 12), Buffer.from('VP8Z', 'latin1'), webp.subarray(16)]);

  return [
    { name: 'truncated JPEG', value: b64(jpeg.subarray(0, Math.floor(jpeg.length * 0.6))), ...INVALID },
    { name: 'truncated PNG', value: b64(png.subarray(0, Math.floor(png.length * 0.6))), ...INVALID },
    { name: 'PNG bomb 30000×30000', value: b64(handmadePng(30000, 30000, 4 * 1024 * 1024)), ...INVALID },
    { name: 'JPEG header claiming 60000×60000', value: b64(withJpegSize(jpeg, 60000, 60000)), ...INVALID },
    { name: 'JPEG header claiming 41 megapixels', value: b64(withJpegSize(jpeg, 8000, 5125)), ...INVALID },
    { name: 'PNG with zero width', value: b64(handmadePng(0, 512, 1024)), ...INVALID },
    { name: 'tiny 10×10 JPEG', value: b64(tiny), ...INVALID },
    { name: 'JPEG APP segment longer than the file', value: b64(oversizedApp), ...INVALID },
    { name: 'RIFF WEBP with an unknown chunk', value: b64(riffUnknown), ...INVALID },
    { name: 'GIF', value: b64(gif), ...UNSUPPORTED },
    { name: 'BMP', value: b64(bmp(300, 300)), ...UNSUPPORTED },
    { name: 'TIFF', value: b64(tiff), ...UNSUPPORTED },
    { name: 'SVG', value: b64(Buffer.from(svg)), ...UNSUPPORTED },
    { name: 'HTML', value: b64(Buffer.from(html)), ...UNSUPPORTED },
    { name: 'PDF', value: b64(Buffer.from(pdf)), ...UNSUPPORTED },
    { name: 'GIF labelled image/png', value: `data:image/png;base64,${b64(gif)}`, ...UNSUPPORTED },
    { name: 'JPEG labelled image/png', value: `data:image/png;base64,${b64(jpeg)}`, ...ACCEPTED },
    { name: 'WebP', value: b64(webp), ...ACCEPTED },
    {
      name: 'JPEG with a ZIP appended after EOI',
      value: b64(Buffer.concat([jpeg, tinyZip('payload.txt', zipPayload)])),
      payload: zipPayload,
      ...ACCEPTED,
    },
    {
      name: 'JPEG with HTML appended after EOI',
      value: b64(Buffer.concat([jpeg, Buffer.from(htmlPayload)])),
      payload: htmlPayload,
      ...ACCEPTED,
    },
    {
      name: 'PNG with a script in a tEXt chunk',
      value: b64(insertPngChunk(png, pngChunk('tEXt', Buffer.from(`Comment\0${textPayload}`, 'latin1')))),
      payload: textPayload,
      ...ACCEPTED,
    },
    {
      name: 'JPEG with a 64 KB APP1 Exif',
      value: b64(insertJpegSegments(jpeg, [hugeExif(exifPayload)])),
      payload: exifPayload,
      ...ACCEPTED,
    },
    { name: 'JPEG with 600 APPn segments', value: b64(insertJpegSegments(jpeg, appSegments)), payload: 'FRAPP599', ...ACCEPTED },
    { name: 'invalid base64 characters', value: '!!!not*base64***', ...INVALID },
    { name: 'base64 of impossible length', value: 'QUJDR', ...INVALID },
    { name: 'empty string', value: '', ...INVALID },
    { name: 'data URL with no payload', value: 'data:image/png;base64,', ...INVALID },
    { name: 'base64 over 15 MB', value: oversizedBase64, status: 413, code: 'payload_too_large' },
  ];
}
