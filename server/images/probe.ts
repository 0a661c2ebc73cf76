/**
 * Reads format, dimensions and EXIF orientation from image headers only, so
 * that a decompression bomb can be refused before any pixel is decoded.
 * Every read is bounds-checked: hostile bytes yield `null`, never a throw.
 */

import type { ImageFormat } from '../engines/types.ts';
import type { ImageProbe } from './types.ts';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function hasAscii(bytes: Buffer, offset: number, text: string): boolean {
  if (offset < 0 || offset + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (bytes[offset + i] !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** The image format by magic bytes, or null when it is not JPEG, PNG or WebP. */
export function sniffFormat(bytes: Buffer): ImageFormat | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'png';
  if (hasAscii(bytes, 0, 'RIFF') && hasAscii(bytes, 8, 'WEBP')) return 'webp';
  return null;
}

/**
 * Format, width, height and (JPEG only) EXIF orientation from the headers,
 * or null when the format is unknown or its header cannot be read.
 */
export function probeImage(bytes: Buffer): ImageProbe | null {
  try {
    switch (sniffFormat(bytes)) {
      case 'jpeg':
        return probeJpeg(bytes);
      case 'png':
        return probePng(bytes);
      case 'webp':
        return probeWebp(bytes);
      default:
        return null;
    }
  } catch {
    // Unreachable by design (every read is bounds-checked); kept so that a
    // missed check degrades to "unreadable" instead of a 500.
    return null;
  }
}

function probePng(bytes: Buffer): ImageProbe | null {
  if (bytes.length < 24 || bytes.readUInt32BE(8) !== 13 || !hasAscii(bytes, 12, 'IHDR')) return null;
  return { format: 'png', width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

function probeWebp(bytes: Buffer): ImageProbe | null {
  const data = 20;
  if (hasAscii(bytes, 12, 'VP8 ')) {
    if (bytes.length < data + 10 || bytes[data + 3] !== 0x9d || bytes[data + 4] !== 0x01 || bytes[data + 5] !== 0x2a) {
      return null;
    }
    return {
      format: 'webp',
      width: bytes.readUInt16LE(data + 6) & 0x3fff,
      height: bytes.readUInt16LE(data + 8) & 0x3fff,
    };
  }
  if (hasAscii(bytes, 12, 'VP8L')) {
    if (bytes.length < data + 5 || bytes[data] !== 0x2f) return null;
    const bits = bytes.readUInt32LE(data + 1);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (hasAscii(bytes, 12, 'VP8X')) {
    if (bytes.length < data + 10) return null;
    return { format: 'webp', width: bytes.readUIntLE(data + 4, 3) + 1, height: bytes.readUIntLE(data + 7, 3) + 1 };
  }
  return null;
}

function isStartOfFrame(marker: number): boolean {
  // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function probeJpeg(bytes: Buffer): ImageProbe | null {
  let orientation: number | undefined;
  let pos = 2;
  while (pos < bytes.length) {
    if (bytes[pos] !== 0xff) return null;
    while (pos < bytes.length && bytes[pos] === 0xff) pos++;
    if (pos >= bytes.length) return null;
    const marker = bytes[pos]!;
    pos++;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    if (marker === 0xd9 || marker === 0xda) return null;
    if (pos + 2 > bytes.length) return null;
    const length = bytes.readUInt16BE(pos);
    const end = pos + length;
    if (length < 2 || end > bytes.length) return null;
    if (isStartOfFrame(marker)) {
      if (length < 7) return null;
      const probe: ImageProbe = {
        format: 'jpeg',
        width: bytes.readUInt16BE(pos + 5),
        height: bytes.readUInt16BE(pos + 3),
      };
      if (orientation !== undefined) probe.orientation = orientation;
      return probe;
    }
    if (marker === 0xe1 && orientation === undefined) {
      orientation = readExifOrientation(bytes.subarray(pos + 2, end));
    }
    pos = end;
  }
  return null;
}

/** Orientation tag (0x0112) of IFD0 in an APP1 payload; undefined on any doubt. */
function readExifOrientation(app1: Buffer): number | undefined {
  if (!hasAscii(app1, 0, 'Exif\0\0')) return undefined;
  const tiff = app1.subarray(6);
  if (tiff.length < 8) return undefined;
  const little = hasAscii(tiff, 0, 'II');
  if (!little && !hasAscii(tiff, 0, 'MM')) return undefined;
  const u16 = (at: number): number => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number): number => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  if (u16(2) !== 42) return undefined;
  const ifd = u32(4);
  if (ifd < 8 || ifd + 2 > tiff.length) return undefined;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > tiff.length) return undefined;
    if (u16(entry) !== 0x0112) continue;
    if (u16(entry + 2) !== 3 || u32(entry + 4) !== 1) return undefined;
    const value = u16(entry + 8);
    return value >= 1 && value <= 8 ? value : undefined;
  }
  return undefined;
}
