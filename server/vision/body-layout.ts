/**
 * A rough human parsing from landmarks, matte and colour: every person pixel
 * goes to the body part whose bone (a capsule around a segment between two
 * landmarks, sized from the shoulder width) is nearest relative to its
 * width; the torso is the shoulder–hip quadrilateral; hair that falls over
 * the shoulders joins the head by colour. Engines use it to know what to
 * cover and what to keep in front. It implements `BodyParser` so that a
 * learned parsing model can replace it.
 */
import { POSE, REGION, type BodyLayout, type BodyParser, type Landmark, type Mask, type RawImage } from './types.ts';

interface Point {
  x: number;
  y: number;
}

/** A bone: a segment from a to b, `radius` wide, labelled `region`. */
export interface Bone {
  region: number;
  a: Point;
  b: Point;
  radius: number;
}

/** The person's matte value above which a pixel belongs to the person. */
const PERSON_THRESHOLD = 128;
/** Work on a grid this many times coarser than the photo, then label full-resolution pixels from it. */
const SCALE = 2;
/** Inside the torso quadrilateral, a bone must be this close (in its radii) to win over the torso. */
const TORSO_SCORE = 0.75;

const mid = (p: Point, q: Point): Point => ({ x: (p.x + q.x) / 2, y: (p.y + q.y) / 2 });
const along = (p: Point, q: Point, t: number): Point => ({ x: p.x + (q.x - p.x) * t, y: p.y + (q.y - p.y) * t });
const dist = (p: Point, q: Point): number => Math.hypot(p.x - q.x, p.y - q.y);

/** The bones and torso quadrilateral for a set of landmarks, in `scale`-times-smaller pixels. */
export function skeleton(landmarks: readonly Landmark[], scale = 1): { bones: Bone[]; torso: Point[]; unit: number } {
  const p = (k: number): Point => ({ x: landmarks[k]!.x / scale, y: landmarks[k]!.y / scale });
  const ls = p(POSE.leftShoulder);
  const rs = p(POSE.rightShoulder);
  const lh = p(POSE.leftHip);
  const rh = p(POSE.rightHip);
  const shoulders = mid(ls, rs);
  const hips = mid(lh, rh);
  // The body's unit of size: shoulder width, or a share of the torso's length when seen from the side.
  const unit = Math.max(dist(ls, rs), 0.55 * dist(shoulders, hips), 1);
  const mouth = mid(p(POSE.mouthLeft), p(POSE.mouthRight));
  const eyes = mid(p(POSE.leftEye), p(POSE.rightEye));
  const nose = p(POSE.nose);
  const crown = along(mouth, eyes, 3.2);
  const chin = along(nose, mouth, 1.9);
  const hand = (wrist: number, index: number, pinky: number): Point => along(p(wrist), mid(p(index), p(pinky)), 1.5);
  const toe = (heel: number, foot: number): Point => along(p(heel), p(foot), 1.1);
  const bones: Bone[] = [
    { region: REGION.head, a: chin, b: crown, radius: 0.3 * unit },
    { region: REGION.neck, a: along(shoulders, chin, 0.1), b: chin, radius: 0.15 * unit },
    { region: REGION.leftUpperArm, a: ls, b: p(POSE.leftElbow), radius: 0.17 * unit },
    { region: REGION.rightUpperArm, a: rs, b: p(POSE.rightElbow), radius: 0.17 * unit },
    { region: REGION.leftLowerArm, a: p(POSE.leftElbow), b: p(POSE.leftWrist), radius: 0.13 * unit },
    { region: REGION.rightLowerArm, a: p(POSE.rightElbow), b: p(POSE.rightWrist), radius: 0.13 * unit },
    { region: REGION.leftHand, a: p(POSE.leftWrist), b: hand(POSE.leftWrist, POSE.leftIndex, POSE.leftPinky), radius: 0.12 * unit },
    { region: REGION.rightHand, a: p(POSE.rightWrist), b: hand(POSE.rightWrist, POSE.rightIndex, POSE.rightPinky), radius: 0.12 * unit },
    { region: REGION.hips, a: along(lh, rh, -0.25), b: along(rh, lh, -0.25), radius: 0.22 * unit },
    { region: REGION.leftUpperLeg, a: along(lh, p(POSE.leftKnee), 0.15), b: p(POSE.leftKnee), radius: 0.24 * unit },
    { region: REGION.rightUpperLeg, a: along(rh, p(POSE.rightKnee), 0.15), b: p(POSE.rightKnee), radius: 0.24 * unit },
    { region: REGION.leftLowerLeg, a: p(POSE.leftKnee), b: p(POSE.leftAnkle), radius: 0.17 * unit },
    { region: REGION.rightLowerLeg, a: p(POSE.rightKnee), b: p(POSE.rightAnkle), radius: 0.17 * unit },
    { region: REGION.leftFoot, a: p(POSE.leftAnkle), b: toe(POSE.leftHeel, POSE.leftFootIndex), radius: 0.1 * unit },
    { region: REGION.rightFoot, a: p(POSE.rightAnkle), b: toe(POSE.rightHeel, POSE.rightFootIndex), radius: 0.1 * unit },
  ];
  // The torso: shoulders widened a little (the deltoids), hips as they are.
  const torso = [along(rs, ls, -0.08), along(ls, rs, -0.08), lh, rh];
  return { bones, torso, unit };
}

/** Distance from (x, y) to segment ab, squared. */
export function segmentDistance2(x: number, y: number, bone: Bone): number {
  const dx = bone.b.x - bone.a.x;
  const dy = bone.b.y - bone.a.y;
  const len2 = dx * dx + dy * dy;
  let t = len2 > 0 ? ((x - bone.a.x) * dx + (y - bone.a.y) * dy) / len2 : 0;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = bone.a.x + t * dx - x;
  const ey = bone.a.y + t * dy - y;
  return ex * ex + ey * ey;
}

/** Whether (x, y) is inside a convex polygon given in either winding. */
export function insideConvex(x: number, y: number, poly: readonly Point[]): boolean {
  let sign = 0;
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i]!;
    const b = poly[(i + 1) % poly.length]!;
    const cross = (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
    if (cross !== 0) {
      const s = cross > 0 ? 1 : -1;
      if (sign === 0) sign = s;
      else if (s !== sign) return false;
    }
  }
  return true;
}

/** Distance from (x, y) to a polygon's boundary. */
function polygonDistance(x: number, y: number, poly: readonly Point[]): number {
  let best = Infinity;
  for (let i = 0; i < poly.length; i++) {
    const d = segmentDistance2(x, y, { region: 0, a: poly[i]!, b: poly[(i + 1) % poly.length]!, radius: 0 });
    if (d < best) best = d;
  }
  return Math.sqrt(best);
}

/** The region of one person pixel (in skeleton coordinates); scores compare distance over radius, squared. */
function nearestRegion(x: number, y: number, bones: readonly Bone[], torso: readonly Point[], unit: number): number {
  let best: number = REGION.torso;
  let bestScore2: number;
  if (insideConvex(x, y, torso)) bestScore2 = TORSO_SCORE * TORSO_SCORE;
  else {
    const s = TORSO_SCORE + polygonDistance(x, y, torso) / (0.2 * unit);
    bestScore2 = s * s;
  }
  for (let k = 0; k < bones.length; k++) {
    const bone = bones[k]!;
    const score2 = segmentDistance2(x, y, bone) / (bone.radius * bone.radius);
    if (score2 < bestScore2) {
      bestScore2 = score2;
      best = bone.region;
    }
  }
  return best;
}

/**
 * The region the bones alone give each photo pixel, as the layout labels it before hair is grown into the head by
 * colour: a function of the pixel's coordinates.
 */
export function boneRegions(landmarks: readonly Landmark[]): (x: number, y: number) => number {
  const { bones, torso, unit } = skeleton(landmarks, SCALE);
  return (x, y) => nearestRegion(Math.floor(x / SCALE) + 0.5, Math.floor(y / SCALE) + 0.5, bones, torso, unit);
}

/** Mean RGB of the cells of rows [y0, y1) where `select` holds, on the coarse grid; null when fewer than `min`. */
function meanColour(
  image: RawImage,
  sw: number,
  rows: [number, number],
  select: (i: number) => boolean,
  min: number,
): [number, number, number] | null {
  let r = 0;
  let g = 0;
  let b = 0;
  let n = 0;
  for (let y = Math.max(0, Math.floor(rows[0])); y < rows[1]; y++) {
    for (let x = 0; x < sw; x++) {
      if (!select(y * sw + x)) continue;
      const j = (y * SCALE * image.width + x * SCALE) * image.channels;
      r += image.data[j]!;
      g += image.data[j + 1]!;
      b += image.data[j + 2]!;
      n++;
    }
  }
  return n >= min ? [r / n, g / n, b / n] : null;
}

function colourDistance(image: RawImage, x: number, y: number, c: readonly number[]): number {
  const j = (y * SCALE * image.width + x * SCALE) * image.channels;
  const r = image.data[j]! - c[0]!;
  const g = image.data[j + 1]! - c[1]!;
  const b = image.data[j + 2]! - c[2]!;
  return Math.sqrt(r * r + g * g + b * b);
}

/** The landmark-and-colour body parser. */
export class HeuristicBodyParser implements BodyParser {
  parse(image: RawImage, landmarks: readonly Landmark[], matte: Mask): BodyLayout {
    const { width, height } = image;
    const sw = Math.ceil(width / SCALE);
    const sh = Math.ceil(height / SCALE);
    const { bones, torso, unit } = skeleton(landmarks, SCALE);
    const coarse = new Uint8Array(sw * sh);
    // Coarse labels for every cell that any person pixel of its block may fall in (matte sampled at the block's corner and centre).
    for (let y = 0; y < sh; y++) {
      for (let x = 0; x < sw; x++) {
        const fx = Math.min(x * SCALE, width - 1);
        const fy = Math.min(y * SCALE, height - 1);
        const cx = Math.min(fx + 1, width - 1);
        const cy = Math.min(fy + 1, height - 1);
        if (Math.max(matte.data[fy * width + fx]!, matte.data[cy * width + cx]!) < PERSON_THRESHOLD / 2) continue;
        coarse[y * sw + x] = nearestRegion(x + 0.5, y + 0.5, bones, torso, unit);
      }
    }
    this.hairOverShoulders(image, coarse, sw, sh, landmarks);

    const labels = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) {
      const row = Math.min((y / SCALE) | 0, sh - 1) * sw;
      for (let x = 0, o = y * width; x < width; x++, o++) {
        if (matte.data[o]! < PERSON_THRESHOLD) continue;
        const label = coarse[row + Math.min((x / SCALE) | 0, sw - 1)]!;
        labels[o] = label !== REGION.background ? label : nearestRegion((x + 0.5) / SCALE, (y + 0.5) / SCALE, bones, torso, unit);
      }
    }
    return { labels, width, height };
  }

  /**
   * Long hair over the shoulders or chest belongs to the head: from the head's
   * hair-coloured cells, grow into neighbouring neck, torso and upper-arm
   * cells above mid-chest whose colour is much nearer the hair's than the
   * garment's or the skin's.
   */
  private hairOverShoulders(image: RawImage, coarse: Uint8Array, sw: number, sh: number, landmarks: readonly Landmark[]): void {
    const at = (k: number): Point => ({ x: landmarks[k]!.x / SCALE, y: landmarks[k]!.y / SCALE });
    const nose = at(POSE.nose);
    const mouth = mid(at(POSE.mouthLeft), at(POSE.mouthRight));
    const shoulders = mid(at(POSE.leftShoulder), at(POSE.rightShoulder));
    const hips = mid(at(POSE.leftHip), at(POSE.rightHip));
    const faceRadius = Math.max(dist(at(POSE.leftEar), at(POSE.rightEar)) * 0.35, 2);
    const chest = along(shoulders, hips, 0.35);
    const inCircle = (i: number, c: Point, r: number): boolean => {
      const dx = (i % sw) + 0.5 - c.x;
      const dy = Math.floor(i / sw) + 0.5 - c.y;
      return dx * dx + dy * dy < r * r;
    };
    const face = mid(nose, mouth);
    const chestRadius = 0.3 * dist(shoulders, hips);
    const rows = (c: Point, r: number): [number, number] => [c.y - r, Math.min(sh, c.y + r + 1)];
    const skin = meanColour(image, sw, rows(face, faceRadius), (i) => coarse[i] === REGION.head && inCircle(i, face, faceRadius), 8);
    const garment = meanColour(
      image,
      sw,
      rows(chest, chestRadius),
      (i) => coarse[i] === REGION.torso && inCircle(i, chest, chestRadius),
      8,
    );
    if (!skin || !garment) return;
    const isHair = (x: number, y: number, hair: readonly number[]): boolean => {
      const dh = colourDistance(image, x, y, hair);
      return dh < 0.5 * colourDistance(image, x, y, garment) && dh < 0.6 * colourDistance(image, x, y, skin);
    };
    // Hair colour: head cells far from the skin's colour.
    const limitY = chest.y;
    const hairRows: [number, number] = [0, Math.min(sh, limitY)];
    const hair = meanColour(
      image,
      sw,
      hairRows,
      (i) => coarse[i] === REGION.head && colourDistance(image, i % sw, Math.floor(i / sw), skin) > 60,
      20,
    );
    if (!hair) return;
    const stack: number[] = [];
    for (let i = 0; i < Math.min(sh, Math.ceil(limitY)) * sw; i++) {
      if (coarse[i] === REGION.head && isHair(i % sw, Math.floor(i / sw), hair)) stack.push(i);
    }
    const grows = new Set<number>([REGION.neck, REGION.torso, REGION.leftUpperArm, REGION.rightUpperArm]);
    while (stack.length > 0) {
      const i = stack.pop()!;
      const x = i % sw;
      for (const n of [i - 1, i + 1, i - sw, i + sw]) {
        if (n < 0 || n >= coarse.length || (n === i - 1 && x === 0) || (n === i + 1 && x === sw - 1)) continue;
        const ny = Math.floor(n / sw);
        if (ny > limitY || !grows.has(coarse[n]!)) continue;
        if (!isHair(n % sw, ny, hair)) continue;
        coarse[n] = REGION.head;
        stack.push(n);
      }
    }
  }
}
