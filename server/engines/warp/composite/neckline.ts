/**
 * The customer's old top showing above a new top's neckline (a shirt's
 * collar above a crew-neck sweater, a halter's strap above a vest, a
 * T-shirt's neckband above a scoop neck) becomes skin. Elsewhere on the
 * body's core old clothing is left to the old-clothing check, since what was
 * under it is unknown; above a neckline it can only be neck and chest.
 *
 * Per column between the shoulders where the new garment begins near the
 * shoulder line (a crew, polo or boat neck, not a camisole's deep front, where
 * a whole chest would have to be invented), the pixels of a collar's height
 * above that neckline that are the person's neck or torso, not skin and not
 * the colour of the hair (long hair falls there) take the skin colour with the
 * photo's broad shading, as removeOldClothing paints old sleeves.
 */
import { skeleton } from '../../../vision/body-layout.ts';
import { POSE, REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { isSkin, shadedSkin, type SkinModel } from './colour.ts';

/**
 * In shoulder widths: a neckline starts at most NECKLINE_DEPTH below the shoulder line, and what is painted above
 * it is at most COLLAR tall (an old collar or neckband, not a chest).
 */
const NECKLINE_DEPTH = 0.3;
const COLLAR = 0.3;
/** A pixel this close to the hair's mean colour may be hair, and is left alone. */
const HAIR_DISTANCE = 45;
/** The hair's colour is known from at least this many non-skin pixels of the head above the eyes. */
const MIN_HAIR_PIXELS = 50;

export interface NecklineInput {
  out: Uint8Array;
  image: RawImage;
  person: PersonAnalysis;
  skin: SkinModel;
  /** How much of each pixel the new tops and dresses cover (not jackets, worn open over a top, nor bottoms). */
  upperCoverage: Float32Array;
  /** The photo's luminance, smoothed finely and broadly: the shading the skin takes. */
  /** The photo's shading (shading.ts), which painted skin takes. */
  shading: Float32Array;
}

/** Paints the old top above the new neckline as skin (see above); returns how many pixels it painted. */
export function bareNeckline(input: NecklineInput): number {
  const { out, image, person, skin, upperCoverage, shading } = input;
  const { width, height, data, channels } = image;
  const neck = skeleton(person.landmarks).bones.find((bone) => bone.region === REGION.neck);
  if (!neck) return 0;
  const chinY = Math.max(0, Math.round(neck.b.y));
  const ls = person.landmarks[POSE.leftShoulder]!;
  const rs = person.landmarks[POSE.rightShoulder]!;
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  const deepest = (ls.y + rs.y) / 2 + NECKLINE_DEPTH * unit;
  const hair = hairColour(image, person, skin);
  let painted = 0;
  for (let x = Math.max(0, Math.round(Math.min(ls.x, rs.x))); x <= Math.min(width - 1, Math.round(Math.max(ls.x, rs.x))); x++) {
    let top = -1;
    for (let y = chinY; y < height; y++) {
      if (upperCoverage[y * width + x]! >= 0.5) {
        top = y;
        break;
      }
    }
    if (top < 0 || top > deepest) continue;
    for (let y = Math.max(chinY, Math.round(top - COLLAR * unit)); y < top; y++) {
      const i = y * width + x;
      const label = person.layout.labels[i]!;
      if (person.matte.data[i]! < 128 || (label !== REGION.neck && label !== REGION.torso)) continue;
      const j = i * channels;
      const r = data[j]!;
      const g = data[j + 1]!;
      const b = data[j + 2]!;
      if (isSkin(skin, r, g, b)) continue;
      if (hair && Math.hypot(r - hair[0], g - hair[1], b - hair[2]) < HAIR_DISTANCE) continue;
      const keep = upperCoverage[i]!;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(shadedSkin(skin, shading[i]!, c) * (1 - keep) + out[i * 3 + c]! * keep);
      painted++;
    }
  }
  return painted;
}

/** The mean colour of the head's non-skin pixels above the eyes (the hair), or null when too few show. */
function hairColour(image: RawImage, person: PersonAnalysis, skin: SkinModel): [number, number, number] | null {
  const { width, data, channels } = image;
  const eyesY = Math.min(person.landmarks[POSE.leftEye]!.y, person.landmarks[POSE.rightEye]!.y);
  const sum: [number, number, number] = [0, 0, 0];
  let n = 0;
  for (let y = 0; y < Math.min(image.height, Math.round(eyesY)); y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (person.layout.labels[i] !== REGION.head || person.matte.data[i]! < 200) continue;
      const j = i * channels;
      if (isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
      sum[0] += data[j]!;
      sum[1] += data[j + 1]!;
      sum[2] += data[j + 2]!;
      n++;
    }
  }
  return n >= MIN_HAIR_PIXELS ? [sum[0] / n, sum[1] / n, sum[2] / n] : null;
}
