/**
 * The wide fixture set (/work/shared/fixtures/wide: 18 people, 49 garments
 * in four categories and three photo styles), read in place, never copied
 * into the repository; and what bench/wide.ts and bench/garments.ts --wide
 * share: the manifest, the warp cut-out's category for each garment as the
 * engine would detect it, picture cells and captions for review images.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import sharp from 'sharp';
import { EngineError } from '../../server/engines/types.ts';
import { cutOutGarment } from '../../server/engines/warp/cutout/index.ts';
import type { GarmentSegmenter } from '../../server/engines/warp/cutout/learned.ts';
import type { GarmentCutout, WarpCategory } from '../../server/engines/warp/types.ts';
import type { PersonAnalyzer } from '../../server/vision/person.ts';
import type { RawImage } from '../../server/vision/types.ts';

export const WIDE = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'wide');

export type WideCategory = 'top' | 'bottom' | 'dress' | 'outerwear';
export const WIDE_CATEGORIES: readonly WideCategory[] = ['top', 'outerwear', 'bottom', 'dress'];

export interface WideImage {
  /** Relative to the wide folder, e.g. `people/fitdit_model_1.jpg`. */
  file: string;
  kind: 'person' | 'garment';
  description: string;
  category?: WideCategory;
  style?: 'flat' | 'ghost' | 'on-model';
  width: number;
  height: number;
}

export interface WideManifest {
  people: WideImage[];
  garments: WideImage[];
}

/** The wide manifest, or exit with a message saying where the fixtures were looked for. */
export function loadWide(): WideManifest {
  const file = join(WIDE, 'manifest.json');
  if (!existsSync(file)) {
    console.error(
      `The wide fixture set is missing: no ${file}.\n` +
        'It is read in place (never copied into the repository): put people/, garments/ and manifest.json there.',
    );
    process.exit(1);
  }
  const images = (JSON.parse(readFileSync(file, 'utf8')) as { images: WideImage[] }).images;
  const missing = images.filter((i) => !existsSync(join(WIDE, i.file)));
  if (missing.length) {
    console.error(`The wide manifest names ${missing.length} photos that are not in ${WIDE}, e.g. ${missing[0]!.file}`);
    process.exit(1);
  }
  return { people: images.filter((i) => i.kind === 'person'), garments: images.filter((i) => i.kind === 'garment') };
}

/** A fixture's id: its file name without folder and extension. */
export const idOf = (file: string): string => basename(file).replace(/\.[a-z]+$/i, '');

/** What the warp cut-out makes of one garment photo asked for with category `auto`. */
export type Detection =
  | { ok: true; category: WarpCategory; photo: 'flat' | 'worn'; cutout: GarmentCutout; ms: number }
  | { ok: false; code: string; message: string; ms: number };

/**
 * The category the warp engine detects for a garment photo: the same cut-out, analyzer and learned segmenter
 * the engine runs on a request with category `auto` (the engine keeps it to itself; its result is the picture).
 */
export async function detectCategory(image: RawImage, analyzer: PersonAnalyzer, segmenter: GarmentSegmenter): Promise<Detection> {
  const t0 = performance.now();
  try {
    const cutout = await cutOutGarment(image, { category: 'auto', analyzer, segmenter });
    return { ok: true, category: cutout.category, photo: cutout.photo, cutout, ms: performance.now() - t0 };
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { ok: false, code: error.code, message: error.message, ms: performance.now() - t0 };
  }
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A caption band: one line of text per entry, light on dark (or on dark red when `alert`). */
export async function captionBand(lines: string[], width: number, alert = false): Promise<Buffer> {
  const height = 8 + 17 * lines.length;
  const text = lines
    .map((line, k) => `<text x="6" y="${19 + 17 * k}" font-family="sans-serif" font-size="14" fill="#f2f2f2">${escapeXml(line)}</text>`)
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${alert ? '#6a1010' : '#222'}"/>${text}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** An image fitted inside a `width`×`height` cell (aspect kept, centred on grey). */
export function cell(input: string | Buffer, width: number, height: number): Promise<Buffer> {
  return sharp(input)
    .rotate()
    .resize(width, height, { fit: 'contain', background: '#808080' })
    .flatten({ background: '#808080' })
    .png()
    .toBuffer();
}

/** A plain cell of one colour, with an optional word in the middle. */
export function blankCell(width: number, height: number, colour: string, word = ''): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${colour}"/><text x="50%" y="50%" text-anchor="middle" font-family="sans-serif" font-size="20" fill="#fff">${escapeXml(word)}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
