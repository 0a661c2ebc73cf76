/**
 * Old bottoms in a bold print (zebra, houndstooth, checks) under a plain
 * top. Their mean colour is a grey between the print's two colours, and a
 * pixel's own colour, or a few pixels' mean, is often nearer the top's
 * white or black than that grey: told by colour alone, the print's pale
 * patches are taken for the top and stay beside new bottoms and above their
 * waistband (#87 and #99 of the wide set). Told by texture, they go: a bold
 * print varies strongly within a few pixels everywhere, a plain top and the
 * wall hardly at all. The person's outline varies as strongly (an arm's
 * edge against the wall), so no pixel within reach of it is in a print.
 */
import { REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { isSkin, luma, type SkinModel } from './colour.ts';

/**
 * Texture is the luminance's standard deviation within `radius` pixels. The bottoms are printed where a quarter of
 * their pixels or fewer vary less than `bold`, and the top is plain where half of its pixels vary `contrast` times
 * less than that quarter; a pixel is in the print where it varies more than the geometric mean of the two.
 */
const PATTERN = { radius: 4, bold: 30, contrast: 4 } as const;

const TOP = new Set<number>([REGION.torso]);
const THIGHS = new Set<number>([REGION.leftUpperLeg, REGION.rightUpperLeg]);

/** Whether a pixel (by index) lies in the old bottoms' print. */
export type InPrint = (i: number) => boolean;

/**
 * Texture is sampled every `step` pixels of a region; so few are enough for its quartiles, and the summed-area
 * tables that answer for every pixel are built only for a printed pair.
 */
const SAMPLE = { step: 6, least: 12 } as const;

const found = new WeakMap<PersonAnalysis, { skin: SkinModel | null; inPrint: InPrint | null }>();

/**
 * A test for the old bottoms' print, or null where the bottoms are not printed, the top is not plain, or either is
 * not seen (skin is left out of both). Found once per person and skin model.
 */
export function printedBottoms(image: RawImage, person: PersonAnalysis, skin: SkinModel | null): InPrint | null {
  const known = found.get(person);
  if (known && known.skin === skin) return known.inPrint;
  const inPrint = findPrint(image, person, skin);
  found.set(person, { skin, inPrint });
  return inPrint;
}

function findPrint(image: RawImage, person: PersonAnalysis, skin: SkinModel | null): InPrint | null {
  const bottoms = deviations(image, person, THIGHS, skin);
  if (bottoms.length < SAMPLE.least) return null;
  const printed = quantile(bottoms, 0.25);
  if (printed < PATTERN.bold) return null;
  const top = deviations(image, person, TOP, skin);
  if (top.length < SAMPLE.least) return null;
  const plain = quantile(top, 0.5);
  if (plain * PATTERN.contrast > printed) return null;
  const threshold = Math.sqrt(Math.max(plain, 1) * printed);
  const { deviation, inside } = summedTables(image, person);
  return (i) => inside(i) && deviation(i) > threshold;
}

/** Texture at sampled pixels of `regions` (the matte's inside, no skin). */
function deviations(image: RawImage, person: PersonAnalysis, regions: ReadonlySet<number>, skin: SkinModel | null): number[] {
  const { width, height, data, channels } = image;
  const r = PATTERN.radius;
  const out: number[] = [];
  for (let y = 0; y < height; y += SAMPLE.step) {
    for (let x = 0; x < width; x += SAMPLE.step) {
      const i = y * width + x;
      if (!regions.has(person.layout.labels[i]!) || person.matte.data[i]! < 200) continue;
      const j = i * channels;
      if (skin && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
      let sum = 0;
      let squares = 0;
      let n = 0;
      for (let v = Math.max(0, y - r); v <= Math.min(height - 1, y + r); v++) {
        for (let u = Math.max(0, x - r); u <= Math.min(width - 1, x + r); u++) {
          const k = (v * width + u) * channels;
          const l = luma(data[k]!, data[k + 1]!, data[k + 2]!);
          sum += l;
          squares += l * l;
          n++;
        }
      }
      const mean = sum / n;
      out.push(Math.sqrt(Math.max(0, squares / n - mean * mean)));
    }
  }
  return out;
}

function quantile(values: number[], q: number): number {
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
}

/**
 * Within PATTERN.radius of any pixel (a square window, clipped at the image's edges): the luminance's standard
 * deviation, and whether the whole window lies inside the person's matte. From summed-area tables, the same cost
 * for every pixel asked.
 */
function summedTables(image: RawImage, person: PersonAnalysis): { deviation: (i: number) => number; inside: (i: number) => boolean } {
  const { width, height, data, channels } = image;
  const stride = width + 1;
  const sum = new Float64Array(stride * (height + 1));
  const squares = new Float64Array(stride * (height + 1));
  const matte = new Int32Array(stride * (height + 1));
  for (let y = 0; y < height; y++) {
    let rowSum = 0;
    let rowSquares = 0;
    let rowMatte = 0;
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const j = i * channels;
      const v = luma(data[j]!, data[j + 1]!, data[j + 2]!);
      rowSum += v;
      rowSquares += v * v;
      rowMatte += person.matte.data[i]! >= 128 ? 1 : 0;
      const k = (y + 1) * stride + x + 1;
      sum[k] = sum[k - stride]! + rowSum;
      squares[k] = squares[k - stride]! + rowSquares;
      matte[k] = matte[k - stride]! + rowMatte;
    }
  }
  // The window's corners in the tables, set for one pixel at a time.
  const r = PATTERN.radius;
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let n = 0;
  const corners = (i: number): void => {
    const x = i % width;
    const y = (i - x) / width;
    const x0 = Math.max(0, x - r);
    const y0 = Math.max(0, y - r);
    const x1 = Math.min(width, x + r + 1);
    const y1 = Math.min(height, y + r + 1);
    [a, b, c, d] = [y1 * stride + x1, y0 * stride + x1, y1 * stride + x0, y0 * stride + x0];
    n = (x1 - x0) * (y1 - y0);
  };
  return {
    deviation: (i) => {
      corners(i);
      const mean = (sum[a]! - sum[b]! - sum[c]! + sum[d]!) / n;
      return Math.sqrt(Math.max(0, (squares[a]! - squares[b]! - squares[c]! + squares[d]!) / n - mean * mean));
    },
    inside: (i) => {
      corners(i);
      return matte[a]! - matte[b]! - matte[c]! + matte[d]! === n;
    },
  };
}
