/**
 * Shared types of the input-image layer: limits, and the image as it moves
 * from the JSON field (decoded) through the header check (probe) to the
 * re-encoded file that gets stored (normalized).
 */

import type { ImageFormat } from '../engines/types.ts';

/** Caps applied to every uploaded image. */
export interface ImageLimits {
  /** Largest decoded size in bytes. */
  maxBytes: number;
  /** Largest width × height, checked from the header before decoding. */
  maxPixels: number;
  /** Smallest allowed shortest side in pixels. */
  minSide: number;
}

/** The bytes of one image field after base64 decoding. */
export interface DecodedImage {
  field: string;
  bytes: Buffer;
  /** Hex SHA-256 of `bytes`. */
  sha256: string;
}

/** What the header alone says about an image. */
export interface ImageProbe {
  format: ImageFormat;
  width: number;
  height: number;
  /** EXIF orientation (1–8) when it could be read cheaply from the header. */
  orientation?: number;
}

/** An image re-encoded without metadata, EXIF orientation applied. */
export interface NormalizedImage {
  bytes: Buffer;
  format: ImageFormat;
  /** Width after rotation. */
  width: number;
  /** Height after rotation. */
  height: number;
}
