/**
 * A drawn person (landmarks, matte and layout of a front-facing body in an
 * old long-sleeved top and trousers) and a drawn flat T-shirt cut-out, for
 * the warp engine's fitting, compositing and post-condition tests.
 */
import type { Layer } from '../../server/engines/warp/fit/render.ts';
import type { GarmentCutout, Point } from '../../server/engines/warp/types.ts';
import { HeuristicBodyParser } from '../../server/vision/body-layout.ts';
import { POSE, type Landmark, type PersonAnalysis, type RawImage } from '../../server/vision/types.ts';

export const W = 400;
export const H = 600;
export const SKIN: [number, number, number] = [224, 172, 140];
export const OLD_TOP: [number, number, number] = [40, 40, 90];
export const WALL: [number, number, number] = [235, 235, 235];
const at = (x: number, y: number): Landmark => ({ x, y, z: 0, visibility: 1, presence: 1 });

export function syntheticPerson(): { image: RawImage; person: PersonAnalysis } {
  const lm: Landmark[] = Array.from({ length: 33 }, () => at(200, 80));
  const set = (k: number, x: number, y: number): void => {
    lm[k] = at(x, y);
  };
  set(POSE.nose, 200, 80);
  set(POSE.leftEye, 210, 70);
  set(POSE.rightEye, 190, 70);
  set(POSE.leftEar, 222, 75);
  set(POSE.rightEar, 178, 75);
  set(POSE.mouthLeft, 207, 92);
  set(POSE.mouthRight, 193, 92);
  set(POSE.leftShoulder, 250, 150);
  set(POSE.rightShoulder, 150, 150);
  set(POSE.leftElbow, 275, 240);
  set(POSE.rightElbow, 125, 240);
  set(POSE.leftWrist, 285, 320);
  set(POSE.rightWrist, 115, 320);
  for (const [k, x, y] of [
    [POSE.leftIndex, 288, 345],
    [POSE.leftPinky, 282, 342],
    [POSE.leftThumb, 280, 335],
    [POSE.rightIndex, 112, 345],
    [POSE.rightPinky, 118, 342],
    [POSE.rightThumb, 120, 335],
  ] as const)
    set(k, x, y);
  set(POSE.leftHip, 230, 300);
  set(POSE.rightHip, 170, 300);
  set(POSE.leftKnee, 230, 420);
  set(POSE.rightKnee, 170, 420);
  set(POSE.leftAnkle, 230, 540);
  set(POSE.rightAnkle, 170, 540);
  set(POSE.leftHeel, 230, 555);
  set(POSE.rightHeel, 170, 555);
  set(POSE.leftFootIndex, 240, 580);
  set(POSE.rightFootIndex, 160, 580);

  const data = new Uint8Array(W * H * 3);
  const matte = new Uint8Array(W * H);
  const paint = (x: number, y: number, c: readonly number[]): void => {
    data.set(c, (y * W + x) * 3);
    matte[y * W + x] = 255;
  };
  for (let i = 0; i < W * H; i++) data.set(WALL, i * 3);
  const segmentDistance = (x: number, y: number, a: Point, b: Point): number => {
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const t = Math.max(0, Math.min(1, ((x - a.x) * dx + (y - a.y) * dy) / (dx * dx + dy * dy)));
    return Math.hypot(a.x + t * dx - x, a.y + t * dy - y);
  };
  const p = (k: number): Point => lm[k]!;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      if (Math.hypot(x - 200, y - 85) < 32)
        paint(x, y, SKIN); // head
      else if (x > 190 && x < 210 && y >= 110 && y < 150)
        paint(x, y, SKIN); // neck
      else if (x >= 155 && x <= 245 && y >= 140 && y < 310)
        paint(x, y, OLD_TOP); // torso
      else if (
        segmentDistance(x, y, p(POSE.leftShoulder), p(POSE.leftElbow)) < 14 ||
        segmentDistance(x, y, p(POSE.rightShoulder), p(POSE.rightElbow)) < 14
      ) {
        // Upper arms: the old top's long sleeves down to the elbow.
        paint(x, y, OLD_TOP);
      } else if (
        segmentDistance(x, y, p(POSE.leftElbow), p(POSE.leftIndex)) < 11 ||
        segmentDistance(x, y, p(POSE.rightElbow), p(POSE.rightIndex)) < 11
      ) {
        paint(x, y, SKIN);
      } else if (x >= 160 && x <= 240 && y >= 310 && y < 560) paint(x, y, [60, 70, 80]); // trousers
    }
  }
  const image: RawImage = { data, width: W, height: H, channels: 3 };
  const mask = { data: matte, width: W, height: H };
  const layout = new HeuristicBodyParser().parse(image, lm, mask);
  return {
    image,
    person: {
      width: W,
      height: H,
      landmarks: lm,
      score: 0.9,
      roi: { cx: 200, cy: 300, width: 600, height: 600, rotation: 0 },
      matte: mask,
      layout,
    },
  };
}

/** A flat T-shirt, 200×240 cut-out: a body rectangle and two short sleeves, in a bright colour. */
export function syntheticTee(): GarmentCutout {
  const gw = 200;
  const gh = 240;
  const data = new Uint8Array(gw * gh * 4);
  for (let y = 0; y < gh; y++) {
    for (let x = 0; x < gw; x++) {
      const body = x >= 50 && x < 150 && y >= 20 && y < 230;
      // Sleeves: parallelograms going down and out from the shoulders.
      const sleeveL = y >= 20 && y < 80 && x >= 150 && x < 150 + (y - 20) * 0.6 + 20 && x > 150 + (y - 20) * 0.6 - 25;
      const sleeveR = y >= 20 && y < 80 && x < 50 && x > 50 - (y - 20) * 0.6 - 20 && x < 50 - (y - 20) * 0.6 + 25;
      if (body || sleeveL || sleeveR) data.set([230, 40, 40, 255], (y * gw + x) * 4);
    }
  }
  return {
    image: { data, width: gw, height: gh, channels: 4 },
    category: 'top',
    categorySource: 'request',
    photo: 'flat',
    origin: { x: 0, y: 0 },
    landmarks: {
      neckLeft: { x: 115, y: 20 },
      neckRight: { x: 85, y: 20 },
      neckFront: { x: 100, y: 35 },
      leftShoulder: { x: 150, y: 22 },
      rightShoulder: { x: 50, y: 22 },
      leftArmpit: { x: 150, y: 80 },
      rightArmpit: { x: 50, y: 80 },
      leftSleeveEnd: { x: 182, y: 78 },
      rightSleeveEnd: { x: 18, y: 78 },
      sleeveHalfWidth: 20,
      leftHem: { x: 150, y: 229 },
      rightHem: { x: 50, y: 229 },
    },
  };
}

/**
 * A flat top laid with its sleeves down, 200×240 cut-out: a body between x `from` and `to`, and sleeves `sleeve`
 * pixels wide hanging against its sides down to y 200, its armpits (hidden by the sleeves) at `armpitY`.
 */
export function hangingSleeveTop(from: number, to: number, sleeve: number, armpitY: number): GarmentCutout {
  const tee = syntheticTee();
  const [gw, gh] = [200, 240];
  const data = new Uint8Array(gw * gh * 4);
  for (let y = 20; y < 230; y++)
    for (let x = 0; x < gw; x++)
      if ((x >= from && x < to) || (y < 200 && ((x >= to && x < to + sleeve) || (x >= from - sleeve && x < from))))
        data.set([230, 40, 40, 255], (y * gw + x) * 4);
  return {
    ...tee,
    image: { data, width: gw, height: gh, channels: 4 },
    landmarks: {
      ...tee.landmarks,
      leftShoulder: { x: to, y: 22 },
      rightShoulder: { x: from, y: 22 },
      leftArmpit: { x: to, y: armpitY },
      rightArmpit: { x: from, y: armpitY },
      leftSleeveEnd: { x: to + sleeve / 2, y: 199 },
      rightSleeveEnd: { x: from - sleeve / 2, y: 199 },
      sleeveHalfWidth: sleeve / 2,
      sleevesHang: true,
      leftHem: { x: to, y: 229 },
      rightHem: { x: from, y: 229 },
    },
  };
}

/** A drawn layer: an opaque (or `alpha`) grey rectangle in photo pixels, all of it the garment's body (or sleeve). */
export function greyLayer(
  x0: number,
  y0: number,
  width: number,
  height: number,
  options: { alpha?: number; sleeve?: boolean } = {},
): Layer {
  return {
    x0,
    y0,
    width,
    height,
    rgb: new Uint8Array(width * height * 3).fill(200),
    alpha: new Float32Array(width * height).fill(options.alpha ?? 1),
    sleeve: new Uint8Array(width * height).fill(options.sleeve ? 1 : 0),
  };
}

/**
 * Where a dark layer (red 40, greyLayer with its rgb filled) drawn over bare skin meets the skin in a composed result,
 * along each of `lines` (rows or columns): the first position from `from` up to `to` on the other side of halfway
 * between the two from the pixel at `from`, `pixel(line, position)` giving the pixel's index; and the largest step
 * between neighbouring lines (a staircase of the layout's cells shows as steps its cells' size).
 */
export function darkEdges(
  out: Uint8Array,
  lines: readonly number[],
  from: number,
  to: number,
  pixel: (line: number, position: number) => number,
): { edges: number[]; largestStep: number } {
  const half = (40 + SKIN[0]) / 2;
  const edges = lines.map((line) => {
    const dark = (t: number): boolean => out[pixel(line, t) * 3]! < half;
    const start = dark(from);
    let t = from;
    while (t < to && dark(t) === start) t++;
    return t;
  });
  return { edges, largestStep: Math.max(...edges.slice(1).map((e, k) => Math.abs(e - edges[k]!))) };
}

/**
 * Paints the box x0 ≤ x < x1, y0 ≤ y < y1 of a drawn person's photo in one colour, as part of the person (matte 255)
 * and of a given layout region; returns the pixels' indices.
 */
export function paintPatch(
  image: RawImage,
  person: PersonAnalysis,
  box: { x0: number; x1: number; y0: number; y1: number },
  rgb: readonly number[],
  region: number,
): number[] {
  const patch: number[] = [];
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) {
      const i = y * image.width + x;
      image.data.set(rgb, i * image.channels);
      person.matte.data[i] = 255;
      person.layout.labels[i] = region;
      patch.push(i);
    }
  }
  return patch;
}
