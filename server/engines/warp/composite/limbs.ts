/**
 * Skin painted on an arm or leg where an old sleeve or trouser leg was: its
 * shape and its colour, both taken from the limb's own bare skin where it
 * shows (a forearm below a short sleeve, a calf below shorts).
 *
 * Shape: an old sleeve is wider than the arm inside it, and painted to its
 * outline an arm becomes a block as wide as a sweatshirt's sleeve. An arm's
 * width runs in proportion to its forearm's (wider at the shoulder, narrower
 * at the wrist, as in people of every build), so the bare forearm's width
 * sets the painted arm's, or the other arm's, or else a share of the
 * shoulders' width. What of the sleeve lies outside becomes background; the
 * arm's edge against it is anti-aliased. Legs keep the bone's core as their
 * shape: a trouser leg hangs close to the leg.
 *
 * Texture: painted in one colour an arm is a flat block with a seam where it
 * meets the bare forearm. Where the arm shows a long enough stretch of bare
 * skin, a painted pixel is that skin's own pixel, mirrored along the arm at
 * the stretch's nearer end (back and forth along it when the painted part is
 * longer) at the same place across the arm: the copy carries the skin's
 * grain, light and shadow, and meets the bare skin without a seam. Elsewhere
 * (no stretch, or no bare pixel where the mirror falls) the colour below is
 * painted.
 *
 * Colour: a limb is lit from one side, so across its width its skin runs from
 * light to dark. Its bare pixels are sorted by where they lie across it into a
 * few bins; a painted pixel takes its place's colour, between the two nearest
 * bins. So a painted upper arm carries on the forearm's light and shadow and
 * meets it without a seam, where one colour for the whole limb (the face's,
 * lighter and redder than most people's arms) made a flat block. A limb that
 * shows too little bare skin takes its pair's (both hang in the same light),
 * else the face's. A leg takes one colour, its bins' mean: measured across
 * the bone's core rather than the leg's own width, its bins are uneven.
 */
import { skeleton, type Bone } from '../../../vision/body-layout.ts';
import { POSE, REGION, type PersonAnalysis, type RawImage } from '../../../vision/types.ts';
import { BARE, isSkin, luma, skinChroma, type SkinModel } from './colour.ts';

interface Limb {
  /** The regions of its upper and lower bone. */
  upper: number;
  lower: number;
  /** The limb whose skin stands in when this one shows too little. */
  pair: number;
  arm: boolean;
}
const LIMBS: readonly Limb[] = [
  { upper: REGION.leftUpperArm, lower: REGION.leftLowerArm, pair: 1, arm: true },
  { upper: REGION.rightUpperArm, lower: REGION.rightLowerArm, pair: 0, arm: true },
  { upper: REGION.leftUpperLeg, lower: REGION.leftLowerLeg, pair: 3, arm: false },
  { upper: REGION.rightUpperLeg, lower: REGION.rightLowerLeg, pair: 2, arm: false },
];
/**
 * An arm's half-width along it, over its mid-forearm's: at the shoulder, the elbow and the wrist (the upper arm's
 * bone runs shoulder to elbow, the lower's elbow to wrist).
 */
const ARM_TAPER = { shoulder: 1.35, elbow: 1.05, wrist: 0.8 } as const;
/** The mid-forearm's half-width in shoulder widths, where no bare forearm shows, and the most and least measured. */
const FOREARM = { usual: 0.085, min: 0.06, max: 0.13 } as const;
/** The forearm is measured over this stretch of its bone (clear of the elbow's and wrist's changes). */
const MEASURED: [number, number] = [0.2, 0.8];
/** A forearm's half-width is measured from at least this many bare pixels on each side of its axis. */
const MIN_SIDE = 25;
/** A forearm's half-width on each side: this quantile of its bare pixels' distances from the axis. */
const EDGE_QUANTILE = 0.9;
/** Bins across a limb's width, from one edge to the other. */
const BINS = 9;
/**
 * Cloning an arm's bare skin: the bare stretch (from the CLONE_QUANTILE to the 1 − CLONE_QUANTILE of its bare pixels'
 * places along the arm) is at least CLONE.length shoulder widths long and at least CLONE.fill of it is bare; a
 * pixel is copied from no farther across than CLONE.across (the arm's edge mixes with the wall), and a copied pixel
 * that is not bare is looked for up to CLONE.search pixels along the arm.
 */
const CLONE = { quantile: 0.02, length: 0.12, fill: 0.5, across: 0.8, search: 3, inward: [1, 0.8, 0.6, 0.4, 0.2, 0] } as const;
/**
 * An arm is bare across its width at a place along it where its bare pixels within `step` pixels along it cover at least
 * `share` of its shape's width there: the arm region reaches past the arm (the trousers beside a hanging hand were
 * taken for an old sleeve and painted over as skin and wall).
 */
const BARE_SECTION = { step: 2, share: 0.5 } as const;
/**
 * An arm's light end: this quantile of its bare pixels' luminance inside its shape; a colour more than PALE times that
 * is no part of it (a dark-skinned arm's 89, beside cream trousers' 151; a pale arm's 210 leaves nothing above it).
 */
const ARM_LIGHT = 0.95;
const PALE = 1.3;
/**
 * An old sleeve ends where the arm is bare across for `run` shoulder widths along it, at least `shortest` shoulder
 * widths from the shoulder, with at most `bare` of the stretch above it bare across (a short sleeve's cap, not a
 * bare shoulder).
 */
const SLEEVE_END = { run: 0.08, shortest: 0.1, bare: 0.3 } as const;
/**
 * An arm wears a sleeve when at most `bare` of its shape's pixels within `reach` shoulder widths of the shoulder are
 * bare skin (a T-shirt's sleeve covers about the first 0.3 of them), and at least MIN_PIXELS of them are seen.
 */
const SLEEVED = { reach: 0.2, bare: 0.3 } as const;
/** A limb's colours are known from at least this many of its bare pixels, over at least MIN_BINS bins. */
const MIN_PIXELS = 300;
const MIN_BINS = 3;

/** The bone `along` pixels down an arm (alongArm) lies on, and how far along it (0 to 1, clamped). */
function boneAt(axes: readonly (Axis | undefined)[], limb: Limb, along: number): { a: Axis; t: number } {
  const upper = axes[limb.upper]!;
  const a = along <= upper.len ? upper : axes[limb.lower]!;
  return { a, t: Math.max(0, Math.min(1, a === upper ? along / upper.len : (along - upper.len) / a.len)) };
}

/** A limb region's bone from a to a + (dx, dy), and the limb's half-width at a (`from`) and at its other end (`to`). */
interface Axis {
  ax: number;
  ay: number;
  dx: number;
  dy: number;
  len2: number;
  len: number;
  from: number;
  to: number;
}

/**
 * An arm pixel's place: OUTSIDE the painted arm's shape (the rest of an old sleeve), INSIDE it, or between at its edge,
 * where the value runs from one to the other with the share of the pixel the arm covers (its edge is anti-aliased).
 */
export const OUTSIDE = 1;
export const INSIDE = 255;

export interface LimbPaint {
  /** Per photo pixel of an arm region (matte ≥ 128): OUTSIDE to INSIDE the arm's shape; 0 for every other pixel. */
  shape: Uint8Array;
  /** The colour painted skin takes at a point of a limb region, written to `out`; false where the limb's own is unknown. */
  colour(x: number, y: number, region: number, out: number[]): boolean;
  /**
   * The arm's own bare skin for a point of an arm region, written to `out`: the photo's pixel mirrored along the arm
   * into its bare stretch, at the same place across it (see above); false where the arm shows too little bare skin
   * or none lies there.
   */
  cloned(x: number, y: number, region: number, out: number[]): boolean;
  /** Whether a region's colours carry its light across it (an arm's do); else painted skin is rounded as on the face's. */
  lit(region: number): boolean;
  /** Where a point of an arm region lies across the painted arm's shape: −1 and 1 at its edges (clamped). */
  across(x: number, y: number, region: number): number;
  /** Whether a photo pixel (by index) is bare skin: skin-coloured over an area, as BARE says, not a speck. */
  bareAt(i: number): boolean;
  /**
   * Whether a photo pixel (by index) of an arm region lies across a bare stretch of its arm (BARE_SECTION): no sleeve
   * goes round the arm there, so what is not skin beside it is something else (the trousers by a hanging hand, a
   * watch), not an old sleeve.
   */
  bareSection(i: number): boolean;
  /**
   * For a photo pixel (by index) of an arm region: which arm (0 or 1) and how far along it the pixel lies, in pixels
   * from the shoulder (alongArm), written to `out`; false off the arms.
   */
  onArm(i: number, out: { arm: number; along: number }): boolean;
  /**
   * How much of the point (x, y) either arm's shape covers (0 to 1, anti-aliased at its edge), whatever the layout's
   * region there: the layout's coarse regions give a forearm's edge to the hips in steps.
   */
  armCover(x: number, y: number): number;
  /**
   * Whether a luminance is far lighter than the arm's own skin, for a photo pixel (by index) of an arm region: above
   * PALE times the ARM_LIGHT quantile of its bare pixels inside its shape. Cream cloth beside a dark-skinned arm passes
   * the skin test (whose range comes from the face, highlights and all) but is no part of the arm.
   */
  paler(i: number, luminance: number): boolean;
  /**
   * Where an arm's (0 or 1) old sleeve ends: the point on its axis from which it is bare across its width (BARE_SECTION)
   * for SLEEVE_END.run shoulder widths, below a sleeve that covers most of it from the shoulder down. Null where the
   * arm is bare from the shoulder (no sleeve), shows no such stretch (a long sleeve, an arm out of sight), or is not
   * an arm.
   */
  sleeveEnd(arm: number): { x: number; y: number } | null;
  /**
   * Where an arm's (0 or 1) old sleeve ends for a new sleeve to reach: sleeveEnd, or the wrist for a long sleeve
   * (longSleeve). Null on a bare arm or one out of sight.
   */
  oldSleeveEnd(arm: number): { x: number; y: number } | null;
  /** Whether an arm (0 or 1) wears a long sleeve: sleeved from the shoulder, and never turning bare (no sleeveEnd). */
  longSleeve(arm: number): boolean;
  /** Whether an arm (0 or 1) wears a sleeve from the shoulder down (SLEEVED): false for a bare arm or one not seen. */
  sleeved(arm: number): boolean;
  /**
   * Whether a photo pixel (by index) of an arm region lies past where its arm's old sleeve ends (sleeveEnd), by less
   * than `reach` pixels along the arm: where a hem cut at a slant still goes round part of the arm.
   */
  pastSleeveEnd(i: number, reach: number): boolean;
}

/** The limbs' paint per person and skin model, found once for every compositing of a try-on. */
const paints = new WeakMap<PersonAnalysis, Map<SkinModel, LimbPaint>>();

/**
 * The painted limbs' shapes and colours (see above), once per person and skin model. `core` is the share of a bone's
 * radius, squared, inside which old clothing on a leg becomes skin (legs keep that shape: a trouser leg hangs close to
 * the leg); it is the same on every call.
 */
export function limbPaint(image: RawImage, person: PersonAnalysis, skin: SkinModel, core: number): LimbPaint {
  let bySkin = paints.get(person);
  if (!bySkin) paints.set(person, (bySkin = new Map()));
  if (!bySkin.has(skin)) bySkin.set(skin, measureLimbs(image, person, skin, core));
  return bySkin.get(skin)!;
}

function measureLimbs(image: RawImage, person: PersonAnalysis, skin: SkinModel, core: number): LimbPaint {
  const { width, height, data, channels } = image;
  const labels = person.layout.labels;
  const { bones, unit } = skeleton(person.landmarks);
  const limbOf = new Int8Array(256).fill(-1);
  LIMBS.forEach((limb, k) => {
    limbOf[limb.upper] = k;
    limbOf[limb.lower] = k;
  });
  // Each limb region's bone, as numbers for the per-pixel loops below. A leg's half-width is its bone's core; an
  // arm's is set once its forearm is measured.
  const axes: (Axis | undefined)[] = [];
  for (const bone of bones) {
    if (limbOf[bone.region]! < 0) continue;
    const half = LIMBS[limbOf[bone.region]!]!.arm ? 0 : bone.radius * Math.sqrt(core);
    axes[bone.region] = axisOf(bone, half);
  }
  // Whether a pixel is the person's and skin-coloured (the wall is not skin), tested when first asked: only the limbs
  // and what lies within BARE.radius of them are.
  const skinTested = new Int8Array(width * height).fill(-1);
  const skinLike = (i: number): number => {
    let known = skinTested[i]!;
    if (known < 0) {
      const j = i * channels;
      known = person.matte.data[i]! >= 128 && isSkin(skin, data[j]!, data[j + 1]!, data[j + 2]!) ? 1 : 0;
      skinTested[i] = known;
    }
    return known;
  };
  // The bare skin of every limb: skin-coloured, and so are its neighbours a few pixels away on all four sides; with
  // human skin's chroma too (a white cuff can pass the first test on pale skin).
  const R = BARE.radius;
  const bare: number[][] = LIMBS.map(() => []);
  for (let y = R; y < height - R; y++) {
    for (let x = R; x < width - R; x++) {
      const i = y * width + x;
      const k = limbOf[labels[i]!]!;
      if (k < 0 || person.matte.data[i]! < 200 || !skinLike(i)) continue;
      if (!skinLike(i - R) || !skinLike(i + R) || !skinLike(i - R * width) || !skinLike(i + R * width)) continue;
      const j = i * channels;
      if (skinChroma(data[j]!, data[j + 1]!, data[j + 2]!)) bare[k]!.push(i);
    }
  }

  // Each arm's mid-forearm half-width, in pixels: measured, else the other arm's, else the usual share of the shoulders.
  const measured = LIMBS.map((limb, k) => (limb.arm ? forearmHalfWidth(bare[k]!, width, axes[limb.lower]!) : null));
  const forearm = LIMBS.map((limb, k) => {
    const w = measured[k] ?? measured[limb.pair] ?? FOREARM.usual * unit;
    return Math.min(FOREARM.max * unit, Math.max(FOREARM.min * unit, w));
  });
  // An arm's half-width at either end of each bone, from its forearm's.
  LIMBS.forEach((limb, k) => {
    if (!limb.arm) return;
    [axes[limb.upper]!.from, axes[limb.upper]!.to] = [ARM_TAPER.shoulder * forearm[k]!, ARM_TAPER.elbow * forearm[k]!];
    [axes[limb.lower]!.from, axes[limb.lower]!.to] = [ARM_TAPER.elbow * forearm[k]!, ARM_TAPER.wrist * forearm[k]!];
  });
  // Where a point lies on its limb region: `across` it, −1 and 1 at its two edges (clamped), and how much of a pixel
  // there lies `inside` the limb's shape (0 to 1). Written to `place`, which every call reuses.
  const place = { across: 0, inside: 0 };
  const locate = (px: number, py: number, region: number): void => {
    const a = axes[region]!;
    project(a, px, py);
    const half = a.from + (a.to - a.from) * projected.t;
    const s = projected.side / half;
    place.across = s < -1 ? -1 : s > 1 ? 1 : s;
    const inside = half - projected.distance + 0.5;
    place.inside = inside < 0 ? 0 : inside > 1 ? 1 : inside;
  };

  const profiles = bare.map((pixels) => {
    const sum = new Float64Array(BINS * 4);
    for (const i of pixels) {
      const x = (i % width) + 0.5;
      const y = Math.floor(i / width) + 0.5;
      locate(x, y, labels[i]!);
      const o = Math.min(BINS - 1, Math.floor(((place.across + 1) / 2) * BINS)) * 4;
      const j = i * channels;
      sum[o]! += data[j]!;
      sum[o + 1]! += data[j + 1]!;
      sum[o + 2]! += data[j + 2]!;
      sum[o + 3]!++;
    }
    return profile(sum);
  });
  // A leg's width is not measured (a trouser leg hangs close to it), so its bare skin fills the bins unevenly: it takes
  // one colour, its bins' mean, which compose.ts rounds as it does the face's.
  const colours = LIMBS.map((limb, k) => {
    const bins = profiles[k] ?? profiles[limb.pair] ?? null;
    if (!bins || limb.arm) return bins;
    const mean = [0, 1, 2].map((c) => bins.reduce((sum, bin) => sum + bin[c]!, 0) / BINS) as [number, number, number];
    return bins.map(() => mean);
  });

  // Each arm's bare stretch along it, from which painted pixels are cloned, where it is long and bare enough.
  const bareMask = new Uint8Array(width * height);
  const stretches = LIMBS.map((limb, k) => {
    if (!limb.arm) return null;
    for (const i of bare[k]!) bareMask[i] = 1;
    const along = bare[k]!.map((i) => alongArm(axes, limb, (i % width) + 0.5, Math.floor(i / width) + 0.5, labels[i]!));
    if (along.length === 0) return null;
    along.sort((a, b) => a - b);
    const from = along[Math.floor(CLONE.quantile * (along.length - 1))]!;
    const to = along[Math.ceil((1 - CLONE.quantile) * (along.length - 1))]!;
    const bareArea = (to - from) * 2 * forearm[k]!;
    if (to - from < CLONE.length * unit || along.length < CLONE.fill * bareArea) return null;
    return { from, to };
  });
  const sample = { x: 0, y: 0 };
  // Each arm's bare sections: its bare pixels counted in steps along it, against the shape's width there.
  const sections = LIMBS.map((limb, k) => {
    if (!limb.arm) return null;
    const steps = Math.ceil((axes[limb.upper]!.len + axes[limb.lower]!.len) / BARE_SECTION.step) + 1;
    const counts = new Float32Array(steps);
    for (const i of bare[k]!) {
      const u = alongArm(axes, limb, (i % width) + 0.5, Math.floor(i / width) + 0.5, labels[i]!);
      if (u >= 0 && u < steps * BARE_SECTION.step) counts[Math.floor(u / BARE_SECTION.step)]!++;
    }
    const covered = new Uint8Array(steps);
    for (let s = 0; s < steps; s++) {
      const { a, t } = boneAt(axes, limb, (s + 0.5) * BARE_SECTION.step);
      const half = a.from + (a.to - a.from) * t;
      covered[s] = counts[s]! >= BARE_SECTION.share * 2 * half * BARE_SECTION.step ? 1 : 0;
    }
    return covered;
  });

  // Every arm pixel's place in the arm's shape, found here once (compose.ts visits them on every compositing of the
  // try-on); a colour is found only for a pixel being painted.
  const shape = new Uint8Array(width * height);
  const matte = person.matte.data;
  // Each arm's pixels inside its shape near the shoulder (SLEEVED), and how many of them are bare.
  const nearShoulder = LIMBS.map(() => 0);
  const bareNearShoulder = LIMBS.map(() => 0);
  const reach = SLEEVED.reach * unit;
  const isArm = new Uint8Array(256);
  LIMBS.forEach((limb) => (isArm[limb.upper] = isArm[limb.lower] = limb.arm ? 1 : 0));
  // An arm is the union of its upper and lower arm's tapered shapes, whichever region the layout gives a pixel: the
  // layout's border between them lies off the elbow, and a pixel past its own bone's end was measured to that end
  // alone, so the painted arm's edge stepped in or out there.
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < width; x++, i++) {
      const region = labels[i]!;
      if (isArm[region] !== 1 || matte[i]! < 128) continue;
      const limb = LIMBS[limbOf[region]!]!;
      locate(x + 0.5, y + 0.5, limb.upper);
      const upper = place.inside;
      locate(x + 0.5, y + 0.5, limb.lower);
      shape[i] = Math.round(OUTSIDE + (INSIDE - OUTSIDE) * Math.max(upper, place.inside));
      if (region === limb.upper && upper >= 0.5 && alongArm(axes, limb, x + 0.5, y + 0.5, region) < reach) nearShoulder[limbOf[region]!]!++;
    }
  }
  for (const [k, pixels] of bare.entries()) {
    const limb = LIMBS[k]!;
    if (!limb.arm) continue;
    for (const i of pixels) {
      if (labels[i] !== limb.upper || shape[i] !== INSIDE) continue;
      if (alongArm(axes, limb, (i % width) + 0.5, Math.floor(i / width) + 0.5, limb.upper) < reach) bareNearShoulder[k]!++;
    }
  }

  // The light end of each arm's own skin: its bare pixels inside its shape (the region's pixels beside the shape may be
  // cloth that passes for skin).
  const lightest = LIMBS.map((limb, k) => {
    if (!limb.arm) return Infinity;
    const lumas = bare[k]!.filter((i) => shape[i] === INSIDE).map((i) =>
      luma(data[i * channels]!, data[i * channels + 1]!, data[i * channels + 2]!),
    );
    if (lumas.length < MIN_PIXELS) return Infinity;
    return Float64Array.from(lumas).sort()[Math.floor(ARM_LIGHT * (lumas.length - 1))]!;
  });

  // Where each arm's old sleeve ends, from its bare sections.
  const sleeveEnds = LIMBS.map((limb, k) => {
    const covered = sections[k];
    if (!limb.arm || !covered) return null;
    const run = Math.max(2, Math.round((SLEEVE_END.run * unit) / BARE_SECTION.step));
    const first = Math.ceil((SLEEVE_END.shortest * unit) / BARE_SECTION.step);
    let streak = 0;
    for (let s = 0; s < covered.length; s++) {
      streak = covered[s] ? streak + 1 : 0;
      if (streak < run) continue;
      const start = s - run + 1;
      if (start < first) return null;
      let bareAbove = 0;
      for (let t = 0; t < start; t++) bareAbove += covered[t]!;
      if (bareAbove > SLEEVE_END.bare * start) return null;
      const { a, t } = boneAt(axes, limb, start * BARE_SECTION.step);
      return { x: a.ax + a.dx * t, y: a.ay + a.dy * t, along: start * BARE_SECTION.step };
    }
    return null;
  });

  const sleeved = (arm: number): boolean => nearShoulder[arm]! >= MIN_PIXELS && bareNearShoulder[arm]! <= SLEEVED.bare * nearShoulder[arm]!;
  const longSleeve = (arm: number): boolean => sleeved(arm) && !sleeveEnds[arm];
  return {
    shape,
    sleeveEnd: (arm) => {
      const end = sleeveEnds[arm];
      return end ? { x: end.x, y: end.y } : null;
    },
    oldSleeveEnd: (arm) => {
      const end = sleeveEnds[arm];
      if (end) return { x: end.x, y: end.y };
      if (!longSleeve(arm)) return null;
      const wrist = person.landmarks[arm === 0 ? POSE.leftWrist : POSE.rightWrist]!;
      return { x: wrist.x, y: wrist.y };
    },
    longSleeve,
    sleeved,
    pastSleeveEnd(i, reach) {
      const k = limbOf[labels[i]!]!;
      const end = k < 0 ? null : sleeveEnds[k];
      if (!end) return false;
      const u = alongArm(axes, LIMBS[k]!, (i % width) + 0.5, Math.floor(i / width) + 0.5, labels[i]!);
      return u >= end.along && u < end.along + reach;
    },
    colour(x, y, region, out) {
      const k = limbOf[region]!;
      const bins = k < 0 ? null : colours[k];
      if (!bins) return false;
      // Between the two nearest bins' centres, so that the bins do not show as stripes along the limb.
      locate(x, y, region);
      const at = Math.max(0, Math.min(BINS - 1, ((place.across + 1) / 2) * BINS - 0.5));
      const lo = Math.floor(at);
      const hi = Math.min(BINS - 1, lo + 1);
      const f = at - lo;
      for (let c = 0; c < 3; c++) out[c] = bins[lo]![c]! + (bins[hi]![c]! - bins[lo]![c]!) * f;
      return true;
    },
    cloned(x, y, region, out) {
      const k = limbOf[region]!;
      const stretch = k < 0 ? null : stretches[k];
      if (!stretch) return false;
      const limb = LIMBS[k]!;
      const u = alongArm(axes, limb, x, y, region);
      if (u >= stretch.from && u <= stretch.to) return false;
      // Mirrored at the stretch's nearer end, back and forth along it, so that the copy meets the bare skin without a
      // seam, at the same place across the arm.
      const span = stretch.to - stretch.from;
      let m = (u < stretch.from ? stretch.from - u : u - stretch.to) % (2 * span);
      if (m > span) m = 2 * span - m;
      const mirrored = u < stretch.from ? stretch.from + m : stretch.to - m;
      locate(x, y, region);
      // Where the bare forearm is narrower on one side than the arm's shape, the copy is taken nearer the axis.
      const across = Math.max(-CLONE.across, Math.min(CLONE.across, place.across));
      for (const inward of CLONE.inward) {
        for (let d = 0; d <= CLONE.search; d++) {
          for (const v of d === 0 ? [mirrored] : [mirrored + d, mirrored - d]) {
            if (v < stretch.from || v > stretch.to) continue;
            pointOnArm(axes, limb, v, across * inward, sample);
            const px = Math.floor(sample.x);
            const py = Math.floor(sample.y);
            if (px < 0 || py < 0 || px >= width || py >= height || bareMask[py * width + px] !== 1) continue;
            const j = (py * width + px) * channels;
            for (let c = 0; c < 3; c++) out[c] = data[j + c]!;
            return true;
          }
        }
      }
      return false;
    },
    across(x, y, region) {
      locate(x, y, region);
      return place.across;
    },
    lit(region) {
      const k = limbOf[region]!;
      return k >= 0 && LIMBS[k]!.arm && colours[k] !== null;
    },
    bareSection(i) {
      const k = limbOf[labels[i]!]!;
      const covered = k < 0 ? null : sections[k];
      if (!covered) return false;
      const u = alongArm(axes, LIMBS[k]!, (i % width) + 0.5, Math.floor(i / width) + 0.5, labels[i]!);
      const s = Math.floor(u / BARE_SECTION.step);
      return s >= 0 && s < covered.length && covered[s] === 1;
    },
    armCover(x, y) {
      let cover = 0;
      for (const limb of LIMBS) {
        if (!limb.arm) continue;
        for (const region of [limb.upper, limb.lower]) {
          locate(x, y, region);
          if (place.inside > cover) cover = place.inside;
        }
      }
      return cover;
    },
    onArm(i, out) {
      const k = limbOf[labels[i]!]!;
      if (k < 0 || !LIMBS[k]!.arm) return false;
      out.arm = k;
      out.along = alongArm(axes, LIMBS[k]!, (i % width) + 0.5, Math.floor(i / width) + 0.5, labels[i]!);
      return true;
    },
    paler(i, luminance) {
      const k = limbOf[labels[i]!]!;
      return k >= 0 && luminance > PALE * lightest[k]!;
    },
    bareAt(i) {
      // Skin over an area: at least BARE.share of the pixels within BARE.radius are skin-coloured.
      const x = i % width;
      const y = (i - x) / width;
      if (x < R || y < R || x >= width - R || y >= height - R) return false;
      let count = 0;
      for (let dy = -R; dy <= R; dy++) for (let dx = -R; dx <= R; dx++) count += skinLike(i + dy * width + dx);
      return count >= BARE.share * (2 * R + 1) * (2 * R + 1);
    },
  };
}

/**
 * How far along an arm a point lies, in pixels from the shoulder along its two bones (shoulder to elbow, elbow to
 * wrist), by the bone of its region; past either end of that bone it goes on along the bone's line.
 */
function alongArm(axes: readonly (Axis | undefined)[], limb: Limb, px: number, py: number, region: number): number {
  const a = axes[region]!;
  const t = ((px - a.ax) * a.dx + (py - a.ay) * a.dy) / a.len2;
  return region === limb.upper ? t * a.len : axes[limb.upper]!.len + t * a.len;
}

/** The point `along` pixels down an arm (alongArm) and `across` its half-width off its axis, written to `out`. */
function pointOnArm(axes: readonly (Axis | undefined)[], limb: Limb, along: number, across: number, out: { x: number; y: number }): void {
  const { a, t } = boneAt(axes, limb, along);
  // The normal on which project() measures a positive side.
  const off = across * (a.from + (a.to - a.from) * t);
  out.x = a.ax + t * a.dx + (off * a.dy) / a.len;
  out.y = a.ay + t * a.dy - (off * a.dx) / a.len;
}

/** A limb region's bone from a to a + (dx, dy), with the limb's half-width `half` at both ends to begin with. */
function axisOf(bone: Bone, half: number): Axis {
  const dx = bone.b.x - bone.a.x;
  const dy = bone.b.y - bone.a.y;
  return { ax: bone.a.x, ay: bone.a.y, dx, dy, len2: dx * dx + dy * dy || 1, len: Math.hypot(dx, dy) || 1, from: half, to: half };
}

/** Where `project` last put a point: how far `t` along its bone (0 to 1), its signed `side` of the axis, its `distance` from the segment. */
const projected = { t: 0, side: 0, distance: 0 };

/** A point's place on an axis, written to `projected` (reused on every call: this runs for every arm pixel). */
function project(a: Axis, px: number, py: number): void {
  const rx = px - a.ax;
  const ry = py - a.ay;
  const t = (rx * a.dx + ry * a.dy) / a.len2;
  projected.t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = a.ax + projected.t * a.dx - px;
  const ey = a.ay + projected.t * a.dy - py;
  projected.side = (rx * a.dy - ry * a.dx) / a.len;
  projected.distance = Math.sqrt(ex * ex + ey * ey);
}

/**
 * The mid-forearm's half-width from its bare pixels (photo indices) over the MEASURED stretch of its bone: on each
 * side of the axis the EDGE_QUANTILE of their distances, the two averaged, over the taper there. Null when either side
 * shows too little.
 */
function forearmHalfWidth(pixels: readonly number[], width: number, axis: Axis): number | null {
  const left: number[] = [];
  const right: number[] = [];
  for (const i of pixels) {
    project(axis, (i % width) + 0.5, Math.floor(i / width) + 0.5);
    const { t, side, distance } = projected;
    if (t < MEASURED[0] || t > MEASURED[1] || distance > Math.abs(side) + 1) continue;
    (side < 0 ? left : right).push(Math.abs(side));
  }
  if (left.length < MIN_SIDE || right.length < MIN_SIDE) return null;
  const quantile = (xs: number[]): number => Float64Array.from(xs).sort()[Math.floor(EDGE_QUANTILE * (xs.length - 1))]!;
  const taper = ARM_TAPER.elbow + (ARM_TAPER.wrist - ARM_TAPER.elbow) * ((MEASURED[0] + MEASURED[1]) / 2);
  return (quantile(left) + quantile(right)) / 2 / taper;
}

/** A limb's colour per bin across it, empty bins taking the nearest filled one's; null when it shows too little skin. */
function profile(sum: Float64Array): [number, number, number][] | null {
  const full = (b: number): boolean => sum[b * 4 + 3]! >= MIN_PIXELS / BINS;
  let pixels = 0;
  let filled = 0;
  for (let b = 0; b < BINS; b++) {
    pixels += sum[b * 4 + 3]!;
    if (full(b)) filled++;
  }
  if (pixels < MIN_PIXELS || filled < MIN_BINS) return null;
  const bins: [number, number, number][] = [];
  for (let b = 0; b < BINS; b++) {
    let nearest = -1;
    for (let d = 0; d < BINS && nearest < 0; d++)
      for (const c of [b - d, b + d]) if (nearest < 0 && c >= 0 && c < BINS && full(c)) nearest = c;
    const n = sum[nearest * 4 + 3]!;
    bins.push([sum[nearest * 4]! / n, sum[nearest * 4 + 1]! / n, sum[nearest * 4 + 2]! / n]);
  }
  return bins;
}
