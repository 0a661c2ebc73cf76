/**
 * The leftover band of old bottoms above new ones: old trousers whose
 * waistband sat higher than the new jeans' show as a band above theirs.
 * What was under that band is the top tucked into or hanging over the old
 * trousers, so the band becomes that top, mirrored at the old waistband,
 * column by column: its texture and shading come from the photo itself.
 *
 * The opposite band (an old T-shirt longer than a new top, below its hem)
 * is not replaced this way: hands in pockets and long tunics there made
 * mirrored trousers look like pasted blocks; the old-clothing check deals
 * with it.
 */
import { REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { GARMENTS_APART, clothingColour, isSkin, type SkinModel } from './colour.ts';
import { printedBottoms, type InPrint } from './pattern.ts';
import { HEAD_AND_HANDS } from './regions.ts';

/**
 * Old garment and neighbour must differ this much in mean colour to be told apart pixel by pixel; a band may be
 * at most `longest` torso lengths long (a longer one is a tunic or a dress, not a hem); `gap` pixels of another
 * colour (a stripe, a seam) do not end a band; a column's band ends where its neighbours' do, within `window`
 * torso lengths.
 */
const BAND = { contrast: GARMENTS_APART, longest: 0.45, gap: 2, window: 0.06 } as const;

/**
 * The band's fringe reaches this many pixels past it, and leans at least `lean` of the way from the top's colour to
 * the old bottoms' (from the replaced pixels beside it).
 */
const FRINGE = { reach: 3, lean: 0.1 } as const;

const UPPER = new Set<number>([REGION.torso]);
const LOWER = new Set<number>([REGION.leftUpperLeg, REGION.rightUpperLeg]);
const TRUNK = new Set<number>([REGION.torso, REGION.hips, REGION.leftUpperLeg, REGION.rightUpperLeg]);

export interface BandInput {
  out: Uint8Array;
  image: RawImage;
  person: PersonAnalysis;
  skin: SkinModel | null;
  /** How much of each pixel the new garments cover. */
  coverage: Float32Array;
  torsoLength: number;
  /** oldBottomsColour's answer, when the caller has it already. */
  colours?: OldColours | null;
}

/** What the customer wears on top and below, told apart by colour (oldBottomsColour). */
export interface OldColours {
  top: [number, number, number];
  bottom: [number, number, number];
  /** Whether a colour is nearer the old bottoms' than the old top's. */
  nearerBottoms(r: number, g: number, b: number): boolean;
  /** Whether a colour is the old bottoms' cloth: not skin, and nearer their colour than the top's. */
  test(r: number, g: number, b: number): boolean;
  /** Where the old bottoms are in a bold print under a plain top, whether a pixel lies in the print (pattern.ts). */
  inPrint: InPrint | null;
}

/**
 * What the customer wears on top (the torso's clothing colour) and below (the thighs'). Null when the two cannot be
 * told apart by colour (under GARMENTS_APART between them) or either is not seen.
 */
export function oldBottomsColour(image: RawImage, person: PersonAnalysis, skin: SkinModel | null): OldColours | null {
  const top = clothingColour(image, person, UPPER, skin);
  const bottom = clothingColour(image, person, LOWER, skin);
  if (!top || !bottom || Math.hypot(top[0] - bottom[0], top[1] - bottom[1], top[2] - bottom[2]) < BAND.contrast) return null;
  const nearerBottoms = (r: number, g: number, b: number): boolean =>
    Math.hypot(r - bottom[0], g - bottom[1], b - bottom[2]) < Math.hypot(r - top[0], g - top[1], b - top[2]);
  return {
    top,
    bottom,
    nearerBottoms,
    test: (r, g, b) => !(skin && isSkin(skin, r, g, b)) && nearerBottoms(r, g, b),
    inPrint: printedBottoms(image, person, skin),
  };
}

/** Replaces the band in `out` (see above) when new bottoms alone are drawn; returns how many pixels it replaced. */
export function replaceWaistBand(input: BandInput): number {
  const { out, image, person, skin, coverage, torsoLength } = input;
  const { width, height, data, channels } = image;
  const bottoms = input.colours !== undefined ? input.colours : oldBottomsColour(image, person, skin);
  if (!bottoms) return 0;
  const { top, bottom } = bottoms;
  // Rows are walked upwards: from the new waistband into the band, and on to the top above it.
  const longest = Math.round(BAND.longest * torsoLength);
  const isOld = (i: number): boolean => {
    if (person.matte.data[i]! < 128 || !TRUNK.has(person.layout.labels[i]!)) return false;
    const [r, g, b] = [data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!];
    return bottoms.test(r, g, b) || (bottoms.inPrint !== null && bottoms.inPrint(i) && !(skin && isSkin(skin, r, g, b)));
  };
  // Per column: the new waistband (the highest covered pixel) and the band's far end.
  const edges = new Int32Array(width).fill(-1);
  const ends = new Int32Array(width).fill(-1);
  for (let x = 0; x < width; x++) {
    let edge = -1;
    for (let y = 0; y < height; y++) {
      if (coverage[y * width + x]! >= 0.5) {
        edge = y;
        break;
      }
    }
    if (edge < 0) continue;
    edges[x] = edge;
    let end = edge;
    let misses = 0;
    for (let y = edge - 1; y >= 0 && edge - y <= longest + BAND.gap; y--) {
      if (coverage[y * width + x]! >= 0.5) break;
      if (isOld(y * width + x)) {
        end = y;
        misses = 0;
      } else if (++misses > BAND.gap) break;
    }
    if (end !== edge) ends[x] = end;
  }
  // The old waistband is one line, not a column's guess: each column takes the median end of its neighbours, and
  // none where most of them found no band (a hand, a belt of the top's colour).
  const half = Math.max(2, Math.round(BAND.window * torsoLength));
  let replacedPixels = 0;
  const replaced = new Uint8Array(width * height);
  for (let x = 0; x < width; x++) {
    const edge = edges[x]!;
    if (edge < 0) continue;
    const near: number[] = [];
    let columns = 0;
    for (let k = Math.max(0, x - half); k <= Math.min(width - 1, x + half); k++) {
      if (edges[k]! < 0) continue;
      columns++;
      if (ends[k]! >= 0) near.push(ends[k]!);
    }
    if (near.length * 2 <= columns) continue;
    near.sort((p, q) => p - q);
    const end = near[near.length >> 1]!;
    const length = edge - end;
    if (length <= 0 || length > longest) continue;
    // Mirrored at the band's far end, past its fringe (the old waistband's own line): row `d` into the band takes
    // the row `d` beyond the fringe.
    for (let d = 1; d <= length; d++) {
      const y = edge - d;
      const source = end - FRINGE.reach - (length - d + 1);
      if (source < 0) continue;
      const i = y * width + x;
      const s = source * width + x;
      if (coverage[i]! > 0.02 || !isOld(i) || person.matte.data[s]! < 128 || !TRUNK.has(person.layout.labels[s]!)) continue;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = data[s * channels + c]!;
      replaced[i] = 1;
      replacedPixels++;
    }
  }
  if (replacedPixels > 0) blendFringe(input, replaced, top, bottom);
  return replacedPixels;
}

/**
 * The band's fringe: pixels within `FRINGE.reach` of the replaced band that lean towards the old bottoms' colour
 * from the replaced pixels around them (the old waistband's anti-aliased line, the band's soft sides) take those
 * pixels' mean, or they stay as a thin dark outline of the old band. Skin, the head and hands, and what the new
 * garment covers are left.
 */
function blendFringe(input: BandInput, replaced: Uint8Array, top: readonly number[], bottom: readonly number[]): void {
  const { out, image, person, skin, coverage } = input;
  const { width, height, data, channels } = image;
  const towards = [bottom[0]! - top[0]!, bottom[1]! - top[1]!, bottom[2]! - top[2]!];
  const apart2 = towards[0]! ** 2 + towards[1]! ** 2 + towards[2]! ** 2;
  // Only round the band: its box grown by the reach.
  let [x0, y0, x1, y1] = [width, height, -1, -1];
  for (let i = 0; i < replaced.length; i++) {
    if (!replaced[i]) continue;
    const x = i % width;
    const y = (i - x) / width;
    [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
  }
  const updates: [number, number, number, number][] = [];
  for (let y = Math.max(0, y0 - FRINGE.reach); y <= Math.min(height - 1, y1 + FRINGE.reach); y++) {
    for (let x = Math.max(0, x0 - FRINGE.reach); x <= Math.min(width - 1, x1 + FRINGE.reach); x++) {
      const i = y * width + x;
      if (replaced[i] || coverage[i]! >= 0.5 || person.matte.data[i]! < 16 || HEAD_AND_HANDS.has(person.layout.labels[i]!)) continue;
      const j = i * channels;
      if (skin && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
      const sum = [0, 0, 0];
      let n = 0;
      for (let v = Math.max(0, y - FRINGE.reach); v <= Math.min(height - 1, y + FRINGE.reach); v++) {
        for (let u = Math.max(0, x - FRINGE.reach); u <= Math.min(width - 1, x + FRINGE.reach); u++) {
          const k = v * width + u;
          if (!replaced[k]) continue;
          for (let c = 0; c < 3; c++) sum[c]! += out[k * 3 + c]!;
          n++;
        }
      }
      if (n === 0) continue;
      const mean = [sum[0]! / n, sum[1]! / n, sum[2]! / n];
      let lean = 0;
      for (let c = 0; c < 3; c++) lean += (data[j + c]! - mean[c]!) * towards[c]!;
      if (lean > FRINGE.lean * apart2) updates.push([i, mean[0]!, mean[1]!, mean[2]!]);
    }
  }
  for (const [i, r, g, b] of updates) {
    out[i * 3] = Math.round(r);
    out[i * 3 + 1] = Math.round(g);
    out[i * 3 + 2] = Math.round(b);
  }
}
