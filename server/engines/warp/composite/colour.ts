/**
 * Colour models sampled from the person: their skin (from the face, else
 * the hands), and the clothes they wear now (chest and thighs), used to tell
 * old clothing from skin when the new garment does not cover it.
 */
import { POSE, REGION, type Mask, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';

/** Skin as a Gaussian on the chroma plane (Cb, Cr) and a luminance range. */
export interface SkinModel {
  cb: number;
  cr: number;
  sigma: number;
  luma: number;
  rgb: [number, number, number];
}

/** Skin is bare where at least `share` of the pixels within `radius` look like skin (a pink shirt's specks are not). */
export const BARE = { radius: 2, share: 0.6 } as const;

export const luma = (r: number, g: number, b: number): number => 0.299 * r + 0.587 * g + 0.114 * b;
const cbOf = (r: number, g: number, b: number): number => -0.1687 * r - 0.3313 * g + 0.5 * b;
const crOf = (r: number, g: number, b: number): number => 0.5 * r - 0.4187 * g - 0.0813 * b;

/** Pixels of `regions` within `radius` of `centre` (or anywhere when no centre), every `step` pixels. */
function sample(
  image: RawImage,
  person: PersonAnalysis,
  regions: ReadonlySet<number>,
  centre: { x: number; y: number } | null,
  radius: number,
  step = 2,
): number[] {
  const { width, height } = image;
  const out: number[] = [];
  const x0 = centre ? Math.max(0, Math.floor(centre.x - radius)) : 0;
  const x1 = centre ? Math.min(width, Math.ceil(centre.x + radius)) : width;
  const y0 = centre ? Math.max(0, Math.floor(centre.y - radius)) : 0;
  const y1 = centre ? Math.min(height, Math.ceil(centre.y + radius)) : height;
  for (let y = y0; y < y1; y += step) {
    for (let x = x0; x < x1; x += step) {
      const i = y * width + x;
      if (!regions.has(person.layout.labels[i]!) || person.matte.data[i]! < 200) continue;
      if (centre && (x - centre.x) ** 2 + (y - centre.y) ** 2 > radius * radius) continue;
      out.push(i);
    }
  }
  return out;
}

function stats(image: RawImage, pixels: readonly number[]): SkinModel | null {
  if (pixels.length < 12) return null;
  const { data, channels } = image;
  const cbs: number[] = [];
  const crs: number[] = [];
  const lumas: number[] = [];
  const rgb: [number, number, number] = [0, 0, 0];
  for (const i of pixels) {
    const r = data[i * channels]!;
    const g = data[i * channels + 1]!;
    const b = data[i * channels + 2]!;
    cbs.push(cbOf(r, g, b));
    crs.push(crOf(r, g, b));
    lumas.push(luma(r, g, b));
    rgb[0] += r / pixels.length;
    rgb[1] += g / pixels.length;
    rgb[2] += b / pixels.length;
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const cb = median(cbs);
  const cr = median(crs);
  // A robust spread: the median distance from the median, floored so a flat face does not make skin unmatchable.
  const spread = median(cbs.map((v, k) => Math.hypot(v - cb, crs[k]! - cr)));
  return { cb, cr, sigma: Math.max(spread * 1.5, 5), luma: median(lumas), rgb };
}

/**
 * The skin colour from a mask of bare skin (Face Mesh's face without eyes, brows and lips); darker outliers (a
 * fringe over the forehead) are left out by taking the brighter three quarters. Null when the mask shows too little.
 */
export function skinModelFromMask(image: RawImage, mask: Mask): SkinModel | null {
  const { data, channels } = image;
  const pixels: number[] = [];
  for (let i = 0; i < mask.data.length; i += 2) if (mask.data[i]! >= 128) pixels.push(i);
  const lumas = pixels.map((i) => luma(data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!)).sort((a, b) => a - b);
  const floor = lumas[Math.floor(lumas.length / 4)] ?? 0;
  return stats(
    image,
    pixels.filter((i) => luma(data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!) >= floor),
  );
}

/** The person's skin colour, from the middle of the face, else from the hands; null when neither shows. */
export function skinModel(image: RawImage, person: PersonAnalysis): SkinModel | null {
  const lm = person.landmarks;
  const nose = lm[POSE.nose]!;
  const mouth = { x: (lm[POSE.mouthLeft]!.x + lm[POSE.mouthRight]!.x) / 2, y: (lm[POSE.mouthLeft]!.y + lm[POSE.mouthRight]!.y) / 2 };
  const centre = { x: (nose.x + mouth.x) / 2, y: (nose.y + mouth.y) / 2 };
  const radius = Math.max(Math.hypot(lm[POSE.leftEar]!.x - lm[POSE.rightEar]!.x, lm[POSE.leftEar]!.y - lm[POSE.rightEar]!.y) * 0.3, 6);
  return (
    stats(image, sample(image, person, new Set<number>([REGION.head]), centre, radius, 1)) ??
    stats(image, sample(image, person, new Set<number>([REGION.leftHand, REGION.rightHand]), null, 0))
  );
}

/** Two garments whose mean colours are at least this far apart (RGB distance) are told apart pixel by pixel. */
export const GARMENTS_APART = 45;

/** How far painted skin follows the photo's shading (shading.ts), either way. */
const SKIN_SHADE = { min: 0.88, max: 1.08 } as const;

/**
 * Skin painted where old clothing was: the person's skin colour times the photo's shading there (`ratio`, from
 * shading.ts), clamped to a byte, since fair skin brightened past 255 would otherwise wrap around in a byte array
 * (and turn teal). One channel `c`.
 */
export function shadedSkin(skin: SkinModel, ratio: number, c: number): number {
  const shade = Math.min(SKIN_SHADE.max, Math.max(SKIN_SHADE.min, ratio));
  return Math.min(255, skin.rgb[c]! * shade);
}

/** Chroma of human skin of any tone (YCbCr offsets): red over blue, in a narrow band. */
const SKIN_CB: [number, number] = [-45, 8];
const SKIN_CR: [number, number] = [4, 55];
/** A pixel as far as this from the clothing's mean colour is not that clothing. */
const NOT_CLOTHING = 40;

/**
 * The share of some regions' pixels that look like bare skin of any tone and unlike the clothing worn on the
 * torso (so a beige garment's own sleeves do not count as arms); null when the regions show too few pixels.
 */
export function bareSkinShare(image: RawImage, person: PersonAnalysis, regions: ReadonlySet<number>): number | null {
  const { data, channels } = image;
  const pixels = sample(image, person, regions, null, 0, 2);
  if (pixels.length < 12) return null;
  const clothing = clothingColour(image, person, new Set<number>([REGION.torso]), null);
  let bare = 0;
  for (const i of pixels) {
    const r = data[i * channels]!;
    const g = data[i * channels + 1]!;
    const b = data[i * channels + 2]!;
    if (!skinChroma(r, g, b)) continue;
    if (clothing && Math.hypot(r - clothing[0], g - clothing[1], b - clothing[2]) < NOT_CLOTHING) continue;
    bare++;
  }
  return bare / pixels.length;
}

/** Whether a colour has the chroma of human skin of any tone, in a shadow too (not so dark that chroma says nothing). */
export function skinChroma(r: number, g: number, b: number): boolean {
  const cb = cbOf(r, g, b);
  const cr = crOf(r, g, b);
  return luma(r, g, b) >= 35 && cb >= SKIN_CB[0] && cb <= SKIN_CB[1] && cr >= SKIN_CR[0] && cr <= SKIN_CR[1];
}

/** Skin in shadow keeps the face's hue (its angle in the Cb-Cr plane) within this many radians (a pink shirt's is farther). */
const SHADOW_HUE = 0.2;

/**
 * Whether a colour is this person's skin in shadow (under the jaw, in a fold of the neck): darker than the face's,
 * with skin's chroma and the face's hue; a shadow on skin is more saturated than the lit skin, so saturation is not
 * compared.
 */
export function isShadowedSkin(model: SkinModel, r: number, g: number, b: number): boolean {
  if (luma(r, g, b) >= model.luma || !skinChroma(r, g, b)) return false;
  const hue = Math.atan2(crOf(r, g, b), cbOf(r, g, b));
  return Math.abs(hue - Math.atan2(model.cr, model.cb)) < SHADOW_HUE;
}

/** Whether a colour is this person's skin. */
export function isSkin(model: SkinModel, r: number, g: number, b: number): boolean {
  const y = luma(r, g, b);
  if (y < model.luma * 0.35 || y > Math.min(255, model.luma * 1.7 + 20)) return false;
  // Squared distances: Math.hypot is several times slower, and this runs on every pixel of a photo.
  const dcb = cbOf(r, g, b) - model.cb;
  const dcr = crOf(r, g, b) - model.cr;
  return dcb * dcb + dcr * dcr < 6.25 * model.sigma * model.sigma;
}

/** Whether the photo's pixel `i` is skin-coloured (isSkin). */
export function isSkinAt(image: RawImage, skin: SkinModel, i: number): boolean {
  const j = i * image.channels;
  return isSkin(skin, image.data[j]!, image.data[j + 1]!, image.data[j + 2]!);
}

/** Mean colour of the non-skin pixels of some regions: what the person wears there now. */
export function clothingColour(
  image: RawImage,
  person: PersonAnalysis,
  regions: ReadonlySet<number>,
  skin: SkinModel | null,
): [number, number, number] | null {
  const { data, channels } = image;
  const pixels = sample(image, person, regions, null, 0, 3);
  const sum: [number, number, number] = [0, 0, 0];
  let n = 0;
  for (const i of pixels) {
    const r = data[i * channels]!;
    const g = data[i * channels + 1]!;
    const b = data[i * channels + 2]!;
    if (skin && isSkin(skin, r, g, b)) continue;
    sum[0] += r;
    sum[1] += g;
    sum[2] += b;
    n++;
  }
  return n >= 12 ? [sum[0] / n, sum[1] / n, sum[2] / n] : null;
}
