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
 * above that neckline that are the person's neck or torso, not skin (nor skin
 * in shadow) and not hair (the hair's colour joined to the hair beside the
 * face: long hair falls there; a black collar under short hair is no hair)
 * take the skin colour with the photo's broad shading, as removeOldClothing
 * paints old sleeves.
 *
 * The same holds below the chin inside the head's region, which reaches over
 * the neck and the old collar and stays in front of every garment
 * (bareUnderChin): there the old collar may also be covered by the new top.
 */
import { boneRegions, skeleton } from '../../../vision/body-layout.ts';
import { POSE, REGION, type Mask, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { BARE, isShadowedSkin, isSkin, luma, shadedSkin, type SkinModel } from './colour.ts';
import { boxMean, flood4 } from '../../../kernel/raster.ts';

/**
 * In shoulder widths: a neckline starts at most NECKLINE_DEPTH below the shoulder line, and what is painted above
 * it is at most COLLAR tall (an old collar or neckband, not a chest).
 */
const NECKLINE_DEPTH = 0.3;
const COLLAR = 0.3;
/** A pixel this close to the hair's mean colour may be hair, and is left alone. */
const HAIR_DISTANCE = 45;
/** Pixels within this many standard deviations of the hair's colours, channel by channel, may be hair. */
const HAIR_SPREAD = 2;
/** Hair is followed down from the rows this many shoulder widths above the chin (beside the face). */
const HAIR_ABOVE = 0.3;
/** The hair's colour is known from at least this many non-skin pixels of the head above the eyes. */
const MIN_HAIR_PIXELS = 50;

export interface NecklineInput {
  out: Uint8Array;
  image: RawImage;
  person: PersonAnalysis;
  skin: SkinModel;
  /** How much of each pixel the new tops and dresses cover (not jackets, worn open over a top, nor bottoms). */
  upperCoverage: Float32Array;
  /** The photo's shading (shading.ts), which painted skin takes. */
  shading: Float32Array;
  /** When given, the pixels painted are set to 1 in it. */
  painted?: Uint8Array;
  /** The colour painted, when known better than `skin` (the neck's own, OldTopUnderChin.neck). */
  paint?: SkinModel;
}

/** Paints the old top above the new neckline as skin (see above); returns how many pixels it painted. */
export function bareNeckline(input: NecklineInput): number {
  const { out, image, person, skin, upperCoverage, shading } = input;
  const paint = input.paint ?? skin;
  const { width, height, data, channels } = image;
  const chinY = Math.max(0, chinRow(person));
  const ls = person.landmarks[POSE.leftShoulder]!;
  const rs = person.landmarks[POSE.rightShoulder]!;
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  const deepest = (ls.y + rs.y) / 2 + NECKLINE_DEPTH * unit;
  const hair = hairColour(image, person, skin);
  const x0 = Math.max(0, Math.round(Math.min(ls.x, rs.x)));
  const x1 = Math.min(width - 1, Math.round(Math.max(ls.x, rs.x)));
  const y1 = Math.min(height - 1, Math.ceil(deepest));
  if (x1 < x0 || y1 < chinY) return 0;
  const bare = bareSkin(image, person.matte, skin, x0, chinY, x1, y1);
  const fallen = hair ? hairFromHead(image, person, hair.near, x0, x1, y1) : null;
  let painted = 0;
  for (let x = x0; x <= x1; x++) {
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
      // Skin stays, and so does skin in the jaw's shadow where it covers an area (a pink collar's specks do not).
      if (isSkin(skin, r, g, b) || bare[(y - chinY) * (x1 - x0 + 1) + x - x0] === 1) continue;
      if (hair?.near(r, g, b) && fallen!.has(i)) continue;
      const keep = upperCoverage[i]!;
      for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(shadedSkin(paint, shading[i]!, c) * (1 - keep) + out[i * 3 + c]! * keep);
      if (input.painted) input.painted[i] = 1;
      painted++;
    }
  }
  return painted;
}

/**
 * Hair falls from the head: the pixels of the hair's colours (`test`: near its mean, or holding its colours) joined
 * through such pixels to those beside the face, in the rows from HAIR_ABOVE shoulder widths above the chin down to
 * it, within columns x0..x1 and down to row y1. A black collar round the neck of someone whose hair ends above it
 * joins none and is clothing (#103); long hair on the shoulders joins the hair beside the face.
 */
function hairFromHead(
  image: RawImage,
  person: PersonAnalysis,
  test: (r: number, g: number, b: number) => boolean,
  x0: number,
  x1: number,
  y1: number,
): FallenHair {
  const { width, data, channels } = image;
  const lm = person.landmarks;
  const unit = Math.hypot(lm[POSE.leftShoulder]!.x - lm[POSE.rightShoulder]!.x, lm[POSE.leftShoulder]!.y - lm[POSE.rightShoulder]!.y);
  const chinY = chinRow(person);
  const top = Math.max(0, Math.round(chinY - HAIR_ABOVE * unit));
  const bw = x1 - x0 + 1;
  if (bw <= 0 || y1 < top) return { has: () => false };
  const isHair = (x: number, y: number): boolean => {
    const i = (top + y) * width + x0 + x;
    const j = i * channels;
    return person.matte.data[i]! >= 128 && test(data[j]!, data[j + 1]!, data[j + 2]!);
  };
  const seeds: number[] = [];
  for (let y = 0; top + y <= Math.min(chinY, y1); y++) for (let x = 0; x < bw; x++) if (isHair(x, y)) seeds.push(y * bw + x);
  const fallen = new Uint8Array(bw * (y1 - top + 1));
  for (const k of flood4(bw, y1 - top + 1, seeds, isHair)) fallen[k] = 1;
  return {
    has: (i) => {
      const x = (i % width) - x0;
      const y = Math.floor(i / width) - top;
      return x >= 0 && x < bw && y >= 0 && y <= y1 - top && fallen[y * bw + x] === 1;
    },
  };
}

/** Which photo pixels (by index) are hair fallen from the head (hairFromHead). */
interface FallenHair {
  has(i: number): boolean;
}

/**
 * The row below which the head's region is neck and shoulders, not face: the chin's. The head's region is the head's
 * bone widened by a head's radius, so its round end reaches below the chin over a collar and the tops of the shoulders.
 */
export function chinRow(person: PersonAnalysis): number {
  const head = skeleton(person.landmarks).bones.find((bone) => bone.region === REGION.head)!;
  return Math.round(head.a.y);
}

export interface UnderChinInput {
  out: Uint8Array;
  image: RawImage;
  person: PersonAnalysis;
  skin: SkinModel;
  /** The photo's shading (shading.ts), which painted skin takes. */
  shading: Float32Array;
  /** Face Mesh's face oval (0/255), when found: never painted. */
  face?: Mask | null;
  /** oldTopUnderChin's answer for this person, skin and face, when it has been asked already. */
  oldTop?: OldTopUnderChin;
}

/** What of the head's region below the chin is the old top, and the neck's colour (oldTopUnderChin). */
export interface OldTopUnderChin {
  /** 2 where painted as skin when no garment covers it, 1 where left as it was, 0 elsewhere. */
  clothing: Uint8Array;
  neck: SkinModel;
}

/** Below the chin, pixels this close to the wall are the outline's mix of hair or skin with it, not clothing. */
const OUTLINE = 2;
/** The neck's own colour is known from at least this many of its skin pixels below the chin. */
const MIN_NECK_PIXELS = 30;

/**
 * The head's region reaches below the chin (its round end, and hair the layout grew into it by colour) over the
 * neck and the old top's collar, and it stays in front of every garment. Below the chin only its bare skin (skin
 * over an area, as on the arms, in shadow too), the face oval, hair (its colours joined to the hair beside the face,
 * hairFromHead: a black collar under short hair is clothing, #103), hair in deep shadow
 * joined to them and the outline's mix with the wall are the head; the rest is the old top (a shirt's collar, a
 * sweatshirt's neckband), which a new top or dress may cover. What it does not cover becomes neck skin where the
 * head's own bone reaches (not in hair grown by colour, unless no hair shows above the eyes to tell its colour) and
 * the pixel is not skin-coloured itself (a strand across the neck), in the neck's own colour where enough of it
 * shows (a neck in the chin's shadow is darker than the face). Returns the old top's pixels there: 2 painted as
 * skin, 1 left as they were.
 */
export function bareUnderChin(input: UnderChinInput): Uint8Array {
  const { out, shading } = input;
  const { clothing, neck } = input.oldTop ?? oldTopUnderChin(input.image, input.person, input.skin, input.face ?? null);
  const { width } = input.image;
  for (let i = Math.max(0, chinRow(input.person) + 1) * width; i < clothing.length; i++) {
    if (clothing[i] !== 2) continue;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(shadedSkin(neck, shading[i]!, c));
  }
  return clothing;
}

/** What of the head's region below the chin is the old top, as bareUnderChin tells it, and the neck's own colour. */
export function oldTopUnderChin(image: RawImage, person: PersonAnalysis, skin: SkinModel, face: Mask | null): OldTopUnderChin {
  const { width, height, data, channels } = image;
  const labels = person.layout.labels;
  const boneRegion = boneRegions(person.landmarks);
  const clothing = new Uint8Array(width * height);
  // The box of the head's region below the chin, widened by the bare-skin test's reach.
  const top = Math.max(0, chinRow(person) + 1);
  let x0 = width;
  let x1 = -1;
  let y1 = -1;
  for (let y = top; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (labels[y * width + x] !== REGION.head) continue;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      y1 = y;
    }
  }
  if (y1 < 0) return { clothing, neck: skin };
  x0 = Math.max(0, x0 - BARE.radius);
  x1 = Math.min(width - 1, x1 + BARE.radius);
  y1 = Math.min(height - 1, y1 + BARE.radius);
  const bw = x1 - x0 + 1;
  const bare = bareSkin(image, person.matte, skin, x0, top, x1, y1);
  const hair = hairColour(image, person, skin);
  const fallen = hair ? hairFromHead(image, person, hair.holds, x0, x1, y1) : null;
  const throughHair = hair ? wallThroughHair(image, person, skin, hair.rgb, top, y1) : null;
  const neck: [number, number, number] = [0, 0, 0];
  let neckPixels = 0;
  for (let y = top; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * width + x;
      if (labels[i] !== REGION.head || person.matte.data[i]! < 128 || (face && face.data[i]! >= 128)) continue;
      const k = (y - top) * bw + x - x0;
      const j = i * channels;
      const [r, g, b] = [data[j]!, data[j + 1]!, data[j + 2]!];
      // Bare skin, in the jaw's shadow too, over an area (a pink shirt's specks are not), hair, and the outline's mix
      // of hair or skin with the wall are the head; the rest is old clothing.
      if (bare[k] === 1) {
        if (isSkin(skin, r, g, b)) {
          neck[0] += r;
          neck[1] += g;
          neck[2] += b;
          neckPixels++;
        }
        continue;
      }
      // Of the hair's colours, only hair joined to the hair beside the face is hair (hairFromHead).
      const hairy = hair?.holds(r, g, b) === true;
      if ((hairy && fallen!.has(i)) || nearWall(person.matte, x, y)) continue;
      if (throughHair?.(r, g, b)) continue;
      // Old clothing, which a new garment may cover. It is painted only where it is not skin-coloured itself (a strand
      // of hair across the neck, a collar's edge), and where the head's own bone reaches, not in hair the layout
      // grew by colour (unless no hair shows above the eyes: then what the layout took for hair was clothing too),
      // except in the hair's colours joined to no hair (a black collar the layout grew into the head).
      const keep = skinOrShadow(skin, r, g, b) || (hair && !hairy && boneRegion(x, y) !== REGION.head);
      clothing[i] = keep ? 1 : 2;
    }
  }
  if (hair) keepHairShadows(image, hair, fallen!, clothing, x0, top, x1, y1);
  const colour: SkinModel =
    neckPixels >= MIN_NECK_PIXELS ? { ...skin, rgb: [neck[0] / neckPixels, neck[1] / neckPixels, neck[2] / neckPixels] } : skin;
  return { clothing, neck: colour };
}

/**
 * The wall seen through hair: curly hair below the chin lets the wall through in holes, which the person's matte
 * takes in, and painted as neck they were patches of skin in the hair (#1, #5, #109). There the photo's colour is a
 * mix of the hair's and the wall's (the wall beside the head in those rows, clear of the person): it lies within
 * WALL_SEEN.near of the line between them in RGB, and nearer it than the old top's colour (the torso's clothing, not
 * skin, in the shoulder widths below the shoulders' line). Only when the old top's colour lies at least
 * WALL_SEEN.apart from that line: a black collar under black hair, or a white one against a white wall, is not told
 * apart, and stays clothing. Null when it cannot be told.
 */
function wallThroughHair(
  image: RawImage,
  person: PersonAnalysis,
  skin: SkinModel,
  hair: readonly [number, number, number],
  top: number,
  bottom: number,
): ((r: number, g: number, b: number) => boolean) | null {
  const { width, data, channels } = image;
  const lm = person.landmarks;
  const ls = lm[POSE.leftShoulder]!;
  const rs = lm[POSE.rightShoulder]!;
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  const mean = (rows: [number, number], test: (i: number) => boolean): [number, number, number] | null => {
    const sum = [0, 0, 0];
    let n = 0;
    for (let y = Math.max(0, rows[0]); y <= Math.min(image.height - 1, rows[1]); y++) {
      for (let x = 0; x < width; x++) {
        const i = y * width + x;
        if (!test(i)) continue;
        for (let c = 0; c < 3; c++) sum[c]! += data[i * channels + c]!;
        n++;
      }
    }
    return n >= WALL_SEEN.pixels ? [sum[0]! / n, sum[1]! / n, sum[2]! / n] : null;
  };
  const wall = mean([top, bottom], (i) => person.matte.data[i]! < WALL_SEEN.clear);
  const shoulders = Math.round((ls.y + rs.y) / 2);
  const oldTop = mean([shoulders, shoulders + Math.round(WALL_SEEN.below * unit)], (i) => {
    if (person.layout.labels[i] !== REGION.torso || person.matte.data[i]! < 128) return false;
    return !isSkin(skin, data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!);
  });
  if (!wall || !oldTop) return null;
  const toMix = (r: number, g: number, b: number): number => distanceToSegment([r, g, b], hair, wall);
  if (toMix(...oldTop) < WALL_SEEN.apart) return null;
  return (r, g, b) => {
    const d = toMix(r, g, b);
    return d < WALL_SEEN.near && d < Math.hypot(oldTop[0] - r, oldTop[1] - g, oldTop[2] - b);
  };
}

/** The distance from p to the segment from a to b (RGB). */
function distanceToSegment(p: readonly number[], a: readonly number[], b: readonly number[]): number {
  const d = [b[0]! - a[0]!, b[1]! - a[1]!, b[2]! - a[2]!];
  const q = [p[0]! - a[0]!, p[1]! - a[1]!, p[2]! - a[2]!];
  const dd = d[0]! * d[0]! + d[1]! * d[1]! + d[2]! * d[2]!;
  const t = dd > 0 ? Math.max(0, Math.min(1, (q[0]! * d[0]! + q[1]! * d[1]! + q[2]! * d[2]!) / dd)) : 0;
  return Math.hypot(q[0]! - t * d[0]!, q[1]! - t * d[1]!, q[2]! - t * d[2]!);
}

/**
 * wallThroughHair: colour distances (RGB), the matte below which a pixel is clear wall, how far below the shoulders'
 * line (shoulder widths) the old top is sampled, and the pixels each mean needs.
 */
const WALL_SEEN = { near: 30, apart: 80, clear: 16, below: 0.3, pixels: 50 } as const;

export interface ShouldersInput {
  out: Uint8Array;
  image: RawImage;
  person: PersonAnalysis;
  skin: SkinModel;
  /** How much of each pixel the new tops and dresses cover. */
  upperCoverage: Float32Array;
  /** The wall behind the person, estimated per pixel (compose.ts). */
  background: Uint8Array;
  /** bareUnderChin's answer: the old top's pixels in the head's region below the chin (2 painted as skin). */
  underChin: Uint8Array;
}

/**
 * In shoulder widths: the neck's half-width where too little bare skin below the chin shows to measure it, and the
 * least and most measured; how far below the chin it is measured. A new top covers a shoulder when its top edge at the
 * shoulder joint's column lies less than COVERED below the joint.
 */
const NECK = { usual: 0.2, min: 0.12, max: 0.3, depth: 0.15 } as const;
const COVERED = 0.1;
/** How far past the shoulder joint (in shoulder widths) old clothing above the new top's shoulders is looked for. */
const SHOULDER_REACH = 0.15;

/**
 * Old clothing that stood above a new top's shoulders beside the neck (a chunky cardigan's shoulders, a collar
 * spread over them) becomes the wall. The head's region reaches over the tops of the shoulders below the chin, and
 * bareUnderChin paints old clothing there as neck skin: beside the neck those were skin patches on the shoulders.
 *
 * Per side of the neck, where the new top covers the shoulder (its top edge at the shoulder joint's column lies
 * within COVERED of the joint: a sleeved top, not a camisole, whose straps leave the shoulder bare), a pixel below
 * the chin, farther from the centre line than the neck's half-width, and above the new top's shoulder line (no column
 * of the top farther out reaches as high) is outside the new silhouette. If it was painted as neck skin, or is old
 * clothing of the torso's region (not skin, not hair), it takes the wall's colour. Returns the pixels walled, or null
 * when none were.
 */
export function wallAboveShoulders(input: ShouldersInput): Uint8Array | null {
  const { out, image, person, skin, upperCoverage, background, underChin } = input;
  const { width, height, data, channels } = image;
  const walled = new Uint8Array(width * height);
  const ls = person.landmarks[POSE.leftShoulder]!;
  const rs = person.landmarks[POSE.rightShoulder]!;
  const unit = Math.hypot(ls.x - rs.x, ls.y - rs.y);
  const centre = (ls.x + rs.x) / 2;
  const chinY = Math.max(0, chinRow(person));
  // The new top's top edge per column, and its shoulder line: per side, the highest top edge from that column outwards.
  // Looked for no lower than the lower joint plus COVERED: nothing below that is walled or decides a shoulder's cover.
  const top = new Int32Array(width).fill(height);
  const lowest = Math.min(height, Math.ceil(Math.max(ls.y, rs.y) + COVERED * unit));
  for (let x = 0; x < width; x++) {
    for (let y = chinY; y < lowest; y++) {
      if (upperCoverage[y * width + x]! >= 0.5) {
        top[x] = y;
        break;
      }
    }
  }
  const line = new Int32Array(width);
  for (let x = 0, highest = height; x < width && x < centre; x++) line[x] = highest = Math.min(highest, top[x]!);
  for (let x = width - 1, highest = height; x >= 0 && x >= centre; x--) line[x] = highest = Math.min(highest, top[x]!);
  const covers = (joint: { x: number; y: number }): boolean => {
    const x = Math.round(joint.x);
    return x >= 0 && x < width && top[x]! < joint.y + COVERED * unit;
  };
  const neck = neckHalfWidth(image, person, skin, centre, chinY, unit);
  const hair = hairColour(image, person, skin);
  const isSkin = (i: number): boolean => skinOrShadow(skin, data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!);
  const wall = (i: number): void => {
    for (let c = 0; c < 3; c++) out[i * 3 + c] = background[i * 3 + c]!;
    walled[i] = 1;
  };
  for (const joint of [ls, rs]) {
    if (!covers(joint)) continue;
    // From a little past the shoulder joint to the neck, from the chin down to the joint and the new top's shoulder
    // line; `margin` pixels clear of the photo's edges.
    const reach = Math.round(SHOULDER_REACH * unit);
    const [x0, x1] =
      joint.x < centre ? [Math.round(joint.x) - reach, Math.floor(centre - neck)] : [Math.ceil(centre + neck), Math.round(joint.x) + reach];
    const bottom = Math.min(height, Math.round(joint.y));
    const above = (margin: number, visit: (x: number, y: number, i: number) => void): void => {
      for (let x = Math.max(margin, x0); x <= Math.min(width - 1 - margin, x1); x++)
        for (let y = chinY + 1; y < Math.min(bottom, height - margin, line[x]!); y++) visit(x, y, y * width + x);
    };
    // Old clothing: painted as neck skin in the head's region, or the torso's not skin nor hair.
    above(0, (_x, _y, i) => {
      if (person.matte.data[i]! < 128) return;
      const label = person.layout.labels[i]!;
      const j = i * channels;
      if (
        label === REGION.head
          ? underChin[i] === 2
          : label === REGION.torso && !isSkin(i) && !hair?.near(data[j]!, data[j + 1]!, data[j + 2]!)
      )
        wall(i);
    });
    // Its outline against the wall next to what was walled (bareUnderChin keeps the head's outline as the head's, and
    // the head's region reaches here), unless skin-coloured.
    const outline: number[] = [];
    above(OUTLINE, (x, y, i) => {
      if (walled[i] || person.matte.data[i]! < SOFT_OUTLINE || !nearWall(person.matte, x, y)) return;
      if (!isSkin(i) && nearWalled(walled, width, x, y)) outline.push(i);
    });
    outline.forEach(wall);
    // Specks of it left standing in the wall (a dark check the hair's colour kept).
    above(OUTLINE, (x, y, i) => {
      if (walled[i] || person.matte.data[i]! < SOFT_OUTLINE || isSkin(i)) return;
      if (wallAround(walled, person.matte, x, y) >= SPECK) wall(i);
    });
  }
  return walled.includes(1) ? walled : null;
}

/** The matte's soft outline, where the person mixes with the wall, starts at this value. */
const SOFT_OUTLINE = 16;

/** A pixel with at least this share of the pixels within OUTLINE of it walled is a speck in the wall. */
const SPECK = 0.5;

/**
 * The share of the pixels within OUTLINE of (x, y) that are the wall, or walled; (x, y) lies at least OUTLINE inside
 * the photo.
 */
function wallAround(walled: Uint8Array, matte: Mask, x: number, y: number): number {
  const { width, data } = matte;
  let n = 0;
  for (let dy = -OUTLINE; dy <= OUTLINE; dy++) {
    for (let dx = -OUTLINE; dx <= OUTLINE; dx++) {
      const k = (y + dy) * width + x + dx;
      if (walled[k] || data[k]! < SOFT_OUTLINE) n++;
    }
  }
  return n / (2 * OUTLINE + 1) ** 2;
}

/** Whether a walled pixel lies within OUTLINE pixels of (x, y), which lies at least OUTLINE inside the photo. */
function nearWalled(walled: Uint8Array, width: number, x: number, y: number): boolean {
  for (let dy = -OUTLINE; dy <= OUTLINE; dy++)
    for (let dx = -OUTLINE; dx <= OUTLINE; dx++) if (walled[(y + dy) * width + x + dx]) return true;
  return false;
}

/**
 * The neck's half-width (px): the farthest bare skin from the centre line in the rows just below the chin, on the run
 * of bare skin that crosses the centre line; NECK.usual shoulder widths where none crosses it.
 */
function neckHalfWidth(image: RawImage, person: PersonAnalysis, skin: SkinModel, centre: number, chinY: number, unit: number): number {
  const { width, height, data, channels } = image;
  const cx = Math.round(centre);
  if (cx < 0 || cx >= width) return NECK.usual * unit;
  const isBare = (x: number, y: number): boolean => {
    const i = y * width + x;
    const j = i * channels;
    return person.matte.data[i]! >= 128 && skinOrShadow(skin, data[j]!, data[j + 1]!, data[j + 2]!);
  };
  let half = 0;
  for (let y = chinY + 1; y < Math.min(height, chinY + NECK.depth * unit); y++) {
    if (!isBare(cx, y)) continue;
    let left = cx;
    while (left > 0 && isBare(left - 1, y)) left--;
    let right = cx;
    while (right < width - 1 && isBare(right + 1, y)) right++;
    half = Math.max(half, cx - left, right - cx);
  }
  if (half === 0) return NECK.usual * unit;
  return Math.min(NECK.max * unit, Math.max(NECK.min * unit, half));
}

/**
 * Over the box [x0, x1] × [y0, y1] of the photo: where the person's skin, in shadow too, covers at least BARE.share
 * of the pixels within BARE.radius (the wall does not count against it). Indexed (y - y0) * (x1 - x0 + 1) + x - x0.
 */
function bareSkin(image: RawImage, matte: Mask, skin: SkinModel, x0: number, y0: number, x1: number, y1: number): Uint8Array {
  const { width, data, channels } = image;
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  const like = new Float32Array(bw * bh);
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const i = y * width + x;
      const j = i * channels;
      like[(y - y0) * bw + x - x0] = matte.data[i]! < 128 || skinOrShadow(skin, data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
    }
  }
  const area = boxMean(like, bw, bh, BARE.radius);
  const bare = new Uint8Array(bw * bh);
  for (let k = 0; k < bare.length; k++) bare[k] = like[k] === 1 && area[k]! >= BARE.share ? 1 : 0;
  return bare;
}

/**
 * Hair in deep shadow beside the neck lies inside the person's matte and is neither skin nor the hair's usual
 * colours: old clothing pixels no lighter than the hair that join hair fallen from the head (hairFromHead) through
 * such pixels are left out of `clothing` (a dark collar that no hair touches stays clothing; one that long hair falls
 * on stays as it is). The
 * wall seen between hair and neck is not told apart this way: a white top on a white wall would be taken for it.
 */
function keepHairShadows(
  image: RawImage,
  hair: Hair,
  fallen: FallenHair,
  clothing: Uint8Array,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
): void {
  const { width, data, channels } = image;
  const bw = x1 - x0 + 1;
  const at = (x: number, y: number): [number, number, number] => {
    const j = ((y0 + y) * width + x0 + x) * channels;
    return [data[j]!, data[j + 1]!, data[j + 2]!];
  };
  const seeds: number[] = [];
  for (let y = 0; y <= y1 - y0; y++) {
    for (let x = 0; x < bw; x++) if (fallen.has((y0 + y) * width + x0 + x) && hair.holds(...at(x, y))) seeds.push(y * bw + x);
  }
  const reached = flood4(bw, y1 - y0 + 1, seeds, (x, y) => luma(...at(x, y)) <= hair.luma);
  for (const k of reached) clothing[(y0 + Math.floor(k / bw)) * width + x0 + (k % bw)] = 0;
}

/** This person's skin, in shadow too. */
function skinOrShadow(skin: SkinModel, r: number, g: number, b: number): boolean {
  return isSkin(skin, r, g, b) || isShadowedSkin(skin, r, g, b);
}

/** Whether the wall (outside the person's matte) lies within OUTLINE pixels of (x, y). */
function nearWall(matte: Mask, x: number, y: number): boolean {
  const { data, width, height } = matte;
  for (let dy = -OUTLINE; dy <= OUTLINE; dy += OUTLINE) {
    for (let dx = -OUTLINE; dx <= OUTLINE; dx += OUTLINE) {
      const px = x + dx;
      const py = y + dy;
      if (px < 0 || py < 0 || px >= width || py >= height || data[py * width + px]! < 128) return true;
    }
  }
  return false;
}

/** The hair's colours: their mean and spread. */
interface Hair {
  /** Within HAIR_DISTANCE of the mean. */
  near(r: number, g: number, b: number): boolean;
  /** Near, or within HAIR_SPREAD standard deviations of the mean in every channel (strands, their shadows and shine). */
  holds(r: number, g: number, b: number): boolean;
  /** The mean's luminance. */
  luma: number;
  /** The mean colour. */
  rgb: readonly [number, number, number];
}

/** The hair's colours per person and skin model, found once for both steps of a try-on's compositing. */
const hairs = new WeakMap<PersonAnalysis, Map<SkinModel, Hair | null>>();

/** The head's non-skin pixels above the eyes (the hair), or null when too few show. */
function hairColour(image: RawImage, person: PersonAnalysis, skin: SkinModel): Hair | null {
  let bySkin = hairs.get(person);
  if (!bySkin) hairs.set(person, (bySkin = new Map()));
  if (!bySkin.has(skin)) bySkin.set(skin, measureHair(image, person, skin));
  return bySkin.get(skin)!;
}

function measureHair(image: RawImage, person: PersonAnalysis, skin: SkinModel): Hair | null {
  const { width, data, channels } = image;
  const eyesY = Math.min(person.landmarks[POSE.leftEye]!.y, person.landmarks[POSE.rightEye]!.y);
  const sum = [0, 0, 0];
  const sum2 = [0, 0, 0];
  let n = 0;
  for (let y = 0; y < Math.min(image.height, Math.round(eyesY)); y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (person.layout.labels[i] !== REGION.head || person.matte.data[i]! < 200) continue;
      const j = i * channels;
      if (isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!)) continue;
      for (let c = 0; c < 3; c++) {
        sum[c]! += data[j + c]!;
        sum2[c]! += data[j + c]! * data[j + c]!;
      }
      n++;
    }
  }
  if (n < MIN_HAIR_PIXELS) return null;
  const mean = sum.map((v) => v / n);
  const spread = sum2.map((v, c) => HAIR_SPREAD * Math.sqrt(Math.max(0, v / n - mean[c]! * mean[c]!)));
  const near = (r: number, g: number, b: number): boolean => Math.hypot(r - mean[0]!, g - mean[1]!, b - mean[2]!) < HAIR_DISTANCE;
  return {
    near,
    luma: luma(mean[0]!, mean[1]!, mean[2]!),
    rgb: [mean[0]!, mean[1]!, mean[2]!],
    holds: (r, g, b) =>
      near(r, g, b) ||
      (Math.abs(r - mean[0]!) <= spread[0]! && Math.abs(g - mean[1]!) <= spread[1]! && Math.abs(b - mean[2]!) <= spread[2]!),
  };
}
