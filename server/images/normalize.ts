/**
 * Re-encodes an uploaded image with sharp: first frame only, EXIF
 * orientation applied, every metadata block dropped. Re-encoding from pixels
 * is what kills polyglots (anything appended or hidden in chunks is gone).
 */

import sharp, { type Sharp } from 'sharp';
import { ApiError } from '../kernel/errors.ts';
import type { DecodedImage, ImageLimits, ImageProbe, NormalizedImage } from './types.ts';

function encode(image: Sharp, format: ImageProbe['format']): Sharp {
  switch (format) {
    case 'jpeg':
      // Huffman optimisation doubles encode time for ~5 % smaller files; submit latency matters more.
      return image.jpeg({ quality: 92, mozjpeg: false, optimiseCoding: false });
    case 'png':
      return image.png({ compressionLevel: 2, adaptiveFiltering: false });
    case 'webp':
      return image.webp({ quality: 92, effort: 2 });
  }
}

/**
 * Decodes and re-encodes `decoded` in its own format (from `probe`). Throws
 * ApiError `invalid_image` when sharp refuses it (truncated, corrupt, over
 * `maxPixels`); sharp's own message is kept only as the error's `cause`.
 */
export async function normalizeImage(decoded: DecodedImage, probe: ImageProbe, limits: ImageLimits): Promise<NormalizedImage> {
  try {
    const image = sharp(decoded.bytes, {
      limitInputPixels: limits.maxPixels,
      failOn: 'warning',
      pages: 1,
      page: 0,
    }).rotate();
    // Without keepMetadata()/withMetadata() sharp writes no EXIF, XMP, IPTC or
    // ICC block; the tests check this rather than trusting the default.
    const { data, info } = await encode(image, probe.format).toBuffer({ resolveWithObject: true });
    return { bytes: data, format: probe.format, width: info.width, height: info.height };
  } catch (cause) {
    const message = 'the image is truncated or corrupt';
    const error = new ApiError('invalid_image', `could not decode ${decoded.field}: ${message}`, {
      errors: [{ field: decoded.field, message }],
    });
    error.cause = cause;
    throw error;
  }
}
