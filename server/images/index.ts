/**
 * The input-image layer: an image field of a JSON body goes decode → check
 * (headers only) → normalize (sharp re-encode) before anything is stored.
 */

import { decodeImageField } from './decode-input.ts';
import { normalizeImage } from './normalize.ts';
import type { DecodedImage, ImageLimits, ImageProbe, NormalizedImage } from './types.ts';
import { checkImage } from './validate.ts';

export { decodeImageField } from './decode-input.ts';
export { normalizeImage } from './normalize.ts';
export { probeImage, sniffFormat } from './probe.ts';
export type { DecodedImage, ImageLimits, ImageProbe, NormalizedImage } from './types.ts';
export { checkImage } from './validate.ts';

/** The limits of the API contract: 15 MB, 40 megapixels, shortest side 256 px. */
export const DEFAULT_IMAGE_LIMITS: Readonly<ImageLimits> = Object.freeze({
  maxBytes: 15 * 1024 * 1024,
  maxPixels: 40_000_000,
  minSide: 256,
});

/** Everything known about one prepared image field. */
export interface PreparedImage {
  decoded: DecodedImage;
  probe: ImageProbe;
  normalized: NormalizedImage;
}

/**
 * Decodes, checks and normalizes one image field; throws the ApiError of the
 * first step that refuses it (see decodeImageField, checkImage, normalizeImage).
 */
export async function prepareImage(value: unknown, field: string, limits: ImageLimits = DEFAULT_IMAGE_LIMITS): Promise<PreparedImage> {
  const decoded = decodeImageField(value, field, limits);
  const probe = checkImage(decoded, limits);
  const normalized = await normalizeImage(decoded, probe, limits);
  return { decoded, probe, normalized };
}
