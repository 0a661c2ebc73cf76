/**
 * Benchmark inputs: two photo-sized JPEGs of about 1 MiB each (a selfie and
 * one garment), made from the shared fixtures, upscaled and re-encoded.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';

/** One encoded input image. */
export interface BenchImage {
  name: string;
  source: string;
  bytes: Buffer;
  width: number;
  height: number;
  quality: number;
  grain: number;
}

const FIXTURES = resolve(import.meta.dirname, '../../../shared/fixtures');
const WIDTH = 1536;
const HEIGHT = 2048;
const TARGET_BYTES = 1024 * 1024;
const TOLERANCE = 0.04;
const GRAIN_STEPS = [0, 2, 3, 4, 6, 8, 12];

/** A seeded 32-bit generator (mulberry32), so inputs are identical on every run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** RGB pixels of the fixture upscaled to WIDTH×HEIGHT, or a noisy gradient when it is missing. */
async function basePixels(path: string, seed: number): Promise<Buffer> {
  if (existsSync(path)) {
    return sharp(path).resize(WIDTH, HEIGHT, { fit: 'cover' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
  }
  const random = seededRandom(seed);
  const pixels = Buffer.alloc(WIDTH * HEIGHT * 3);
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const i = (y * WIDTH + x) * 3;
      pixels[i] = (x * 255) / WIDTH + random() * 40;
      pixels[i + 1] = (y * 255) / HEIGHT + random() * 40;
      pixels[i + 2] = 128 + 100 * Math.sin((x + y) / 37) + random() * 40;
    }
  }
  return pixels;
}

// Upscaling leaves smooth pixels that compress far below a real 3-megapixel
// photo; sensor-like grain brings the JPEG to a realistic size and entropy.
function addGrain(pixels: Buffer, amplitude: number, seed: number): Buffer {
  if (amplitude === 0) return pixels;
  const random = seededRandom(seed);
  const out = Buffer.allocUnsafe(pixels.length);
  for (let i = 0; i < pixels.length; i++) {
    const noise = (random() + random() + random() - 1.5) * 2 * amplitude;
    out[i] = Math.max(0, Math.min(255, Math.round(pixels[i]! + noise)));
  }
  return out;
}

function encode(pixels: Buffer, quality: number): Promise<Buffer> {
  return sharp(pixels, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } })
    .jpeg({ quality, chromaSubsampling: '4:2:0' })
    .toBuffer();
}

/** The smallest grain, then the quality (binary search), whose JPEG lands within 4 % of 1 MiB. */
async function makeImage(name: string, path: string, seed: number): Promise<BenchImage> {
  const base = await basePixels(path, seed);
  let best: BenchImage | null = null;
  for (const grain of GRAIN_STEPS) {
    const pixels = addGrain(base, grain, seed);
    let low = 50;
    let high = 100;
    while (low <= high) {
      const quality = Math.floor((low + high) / 2);
      const bytes = await encode(pixels, quality);
      const candidate: BenchImage = {
        name,
        source: existsSync(path) ? path : 'generated',
        bytes,
        width: WIDTH,
        height: HEIGHT,
        quality,
        grain,
      };
      if (!best || Math.abs(bytes.length - TARGET_BYTES) < Math.abs(best.bytes.length - TARGET_BYTES)) best = candidate;
      if (Math.abs(bytes.length - TARGET_BYTES) <= TARGET_BYTES * TOLERANCE) return candidate;
      if (bytes.length < TARGET_BYTES) low = quality + 1;
      else high = quality - 1;
    }
  }
  return best!;
}

/** The selfie and garment JPEGs of the benchmark. */
export async function makeBenchImages(): Promise<{ selfie: BenchImage; item: BenchImage }> {
  const [selfie, item] = await Promise.all([
    makeImage('selfie', resolve(FIXTURES, 'people/viton_00055_00.jpg'), 55),
    makeImage('item', resolve(FIXTURES, 'garments/upper_viton_00055_00.jpg'), 56),
  ]);
  return { selfie, item };
}
