/**
 * Header-only checks of a decoded image against the upload contract. Runs
 * before sharp ever sees the bytes, so a decompression bomb costs nothing.
 */

import { ApiError, type ProblemCode } from '../kernel/errors.ts';
import { probeImage, sniffFormat } from './probe.ts';
import type { DecodedImage, ImageLimits, ImageProbe } from './types.ts';

function refuse(code: ProblemCode, field: string, message: string): ApiError {
  return new ApiError(code, `${field}: ${message}`, { errors: [{ field, message }] });
}

function megapixels(pixels: number): string {
  return `${Number((pixels / 1_000_000).toFixed(1))} megapixels`;
}

/**
 * Probes a decoded image and enforces format, dimensions and pixel count.
 * Throws ApiError `unsupported_media_type` (not JPEG, PNG or WebP by content),
 * `payload_too_large` (over `maxBytes`) or `invalid_image` (unreadable header,
 * zero dimensions, more than `maxPixels`, shortest side under `minSide`).
 */
export function checkImage(decoded: DecodedImage, limits: ImageLimits): ImageProbe {
  const { field, bytes } = decoded;
  if (bytes.length > limits.maxBytes) {
    throw refuse('payload_too_large', field, `the image is larger than ${limits.maxBytes} bytes`);
  }
  if (sniffFormat(bytes) === null) {
    throw refuse('unsupported_media_type', field, 'is not a JPEG, PNG or WebP image');
  }
  const probe = probeImage(bytes);
  if (probe === null || probe.width === 0 || probe.height === 0) {
    throw refuse('invalid_image', field, `the ${probe?.format ?? 'image'} header is unreadable or declares no size`);
  }
  const { width, height } = probe;
  if (width * height > limits.maxPixels) {
    throw refuse(
      'invalid_image',
      field,
      `${width}×${height} is ${megapixels(width * height)}; the limit is ${megapixels(limits.maxPixels)}`,
    );
  }
  if (Math.min(width, height) < limits.minSide) {
    throw refuse('invalid_image', field, `${width}×${height} is too small; the shortest side must be at least ${limits.minSide} px`);
  }
  return probe;
}
