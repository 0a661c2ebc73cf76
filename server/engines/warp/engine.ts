/**
 * `warp`: the fast try-on engine that runs on any CPU. prepare (the person
 * analyzer, once) → person (landmarks, matte, layout) → garments (cut out,
 * categorised, landmarked) → fit (thin-plate spline from garment landmarks
 * to the body, sized by size, personSize and fit, styled) → composite
 * (old clothing removed, the person's shading, layers in order) → PNG.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { PersonAnalyzer, readRawImage } from '../../vision/person.ts';
import { analyseCustomer } from '../person.ts';
import { POSE, type RawImage } from '../../vision/types.ts';
import {
  EngineError,
  type CreateEngine,
  type Engine,
  type EngineDescription,
  type EngineRequest,
  type EngineResult,
  type EngineRunOptions,
  type GarmentCategory,
} from '../types.ts';
import { encodePixels } from '../encode.ts';
import { layerOf } from '../layers.ts';
import { RunStages } from '../stages.ts';
import { CORE_RADIUS2, compose, type PlacedLayer } from './composite/compose.ts';
import { limbPaint } from './composite/limbs.ts';
import { armsFolded, bodyFrame, dot, polylineLength, sub } from './fit/body.ts';
import { placeGarment, type Placement } from './fit/place.ts';
import { folds, renderGarment, type Layer } from './fit/render.ts';
import { hemAtWrists, reachShoulders, restOnShoulders } from './fit/drape.ts';
import { boxOf } from '../../kernel/raster.ts';
import { closeGaps } from './composite/gaps.ts';
import { oldTopUnderChin } from './composite/neckline.ts';
import { garmentScale } from './fit/sizing.ts';
import {
  faceViolation,
  garmentViolation,
  layerViolations,
  oldClothingViolation,
  poseViolation,
  sleeveShare,
  sleeveless,
  type Violation,
} from './checks.ts';
import { skinModel, skinModelFromMask } from './composite/colour.ts';
import { FaceMesh, poseHeadBox } from '../../vision/face-mesh.ts';
import { cutOutGarment } from './cutout/index.ts';
import { oldBottomsTop, oldTopHem } from './fit/old-hem.ts';
import { clothedWidth } from './fit/old-waist.ts';
import { GarmentSegmenter } from './cutout/learned.ts';
import type { GarmentCutout, WarpCategory } from './types.ts';

export interface WarpOptions {
  /** ONNX Runtime threads for the person analysis (default 1). */
  threads?: number;
}

/**
 * Levels of caution in placing a garment: 0 all its landmarks, 1 the essential ones (shoulders, sides, hem,
 * sleeve ends), 2 the essential ones without the sleeve ends (sleeves keep the garment's own shape).
 */
const SAFER = 2;

/**
 * Photos larger than this (with a fifth to spare) are worked on at this many pixels, the engine's own resolution
 * (768×1024), and blended back.
 */
const WORKING_PIXELS = 768 * 1024;

/** How far past the customer's own top's hem a new top drawn down to it reaches, in torso lengths. */
const HEM_SPARE = 0.02;

/**
 * A sleeve shorter than this share of the arm (shoulder to wrist, both in shoulder widths) leaves a long old sleeve
 * below it on the forearm: a short sleeve's 0.3 to 0.45 of about 1.4, a three-quarter one's 0.9 to 1.
 */
const SHORT_SLEEVE = 0.75;

/**
 * Whether a garment whose sleeves are `share` shoulder widths long goes over a customer's long sleeves, which stay on
 * the arms below its own, on arms `armLength` shoulder widths long: a top or dress whose sleeves end well above the
 * wrists (painted as bare forearms, the old sleeves were flat tubes of skin), and a jacket whatever its sleeves (a
 * shirt's cuffs below a blazer's sleeves are worn so; painted as skin, they were blocks above the hands, #8). Not a
 * garment without sleeves (share 0), which is worn over or replaces the whole top.
 */
export function overLongSleeves(category: WarpCategory, share: number, armLength: number): boolean {
  return share > 0 && (category === 'outerwear' || share < SHORT_SLEEVE * armLength);
}

/** Cut-outs kept per engine process, by garment photo and requested category (catalogue garments come back). */
const CUTOUT_CACHE = 32;

export class WarpEngine implements Engine {
  readonly id = 'warp';
  private analyzer: PersonAnalyzer | null = null;
  private segmenter: GarmentSegmenter | null = null;
  private faces: FaceMesh | null = null;
  private readonly cutouts = new Map<string, GarmentCutout>();
  private loadError: string | null = null;

  constructor(private readonly options: WarpOptions = {}) {}

  describe(): EngineDescription {
    return {
      id: this.id,
      name: 'Fast warp (CPU)',
      ready: this.loadError === null,
      ...(this.loadError ? { reason: this.loadError } : {}),
      device: 'cpu',
      license:
        'engine: proprietary; pose, segmentation and face models: Apache-2.0 (Google MediaPipe); garment cut-out: U²-Netp, Apache-2.0',
      resolution: { width: 768, height: 1024 },
      honors: ['size', 'personSize', 'fit', 'styling', 'categories'],
      typicalSeconds: 1,
      about:
        'A quick preview of the garment’s colour and print on the customer, drawn in about a second. It does not show how the garment drapes or fits.',
    };
  }

  async load(): Promise<void> {
    try {
      this.analyzer ??= await PersonAnalyzer.create({ threads: this.options.threads ?? 1 });
      this.segmenter ??= await GarmentSegmenter.create({ threads: this.options.threads ?? 1 });
      this.faces ??= await FaceMesh.create({ threads: this.options.threads ?? 1 });
      this.loadError = null;
    } catch (error) {
      this.loadError = `the pose, segmentation, face and cut-out models could not be loaded: ${(error as Error).message}`;
      throw error;
    }
  }

  async run(request: EngineRequest, options: EngineRunOptions): Promise<EngineResult> {
    const analyzer = this.analyzer;
    const segmenter = this.segmenter;
    const faces = this.faces;
    if (!analyzer || !segmenter || !faces) throw new EngineError('engine_unavailable', 'the warp engine is not loaded', true);
    const stages = new RunStages(options);
    // A phone's 12 megapixels are worked on at the engine's 0.8 (768×1024), and the result is blended back into the
    // full photo. The working copy is decoded straight at its size (JPEG's shrink-on-load), while the full photo is
    // decoded beside the analysis, on another thread, and awaited only to blend back.
    const { image, full } = await stages.run('read photo', 'preprocessing', 0.02, () => readPhoto(request.selfie.path));
    const person = await stages.run('analyse customer', 'preprocessing', 0.05, () => analyseCustomer(analyzer, image));

    const garments: GarmentCutout[] = [];
    for (const [k, item] of request.items.entries()) {
      const progress = 0.1 + (0.3 * k) / request.items.length;
      garments.push(
        await stages.run(`cut out garment ${k + 1}`, 'preprocessing', progress, () =>
          this.cutOut(item.path, request.categories[k] ?? 'auto', analyzer, segmenter),
        ),
      );
    }

    const body = bodyFrame(person);
    const pose = poseViolation(person, body, garments);
    if (pose) throw new EngineError('pose_unsupported', pose.detail);
    const cut = garmentViolation(garments);
    if (cut) throw new EngineError('pose_unsupported', cut.detail);
    const scale = garmentScale(request.size, request.personSize, request.fit);
    // Tucked: the top ends at the waistband, into new bottoms (drawn over it) or the customer's own.
    const tucked = request.styling.includes('tucked');
    const ordered = [...garments].sort((a, b) => order(a, tucked) - order(b, tucked));
    // Face Mesh gives the exact face (kept byte for byte) and a clean skin sample (no eyes, brows, lips or fringe).
    const face = await stages.run('face mesh', 'generating', 0.5, () => faces.detect(image, poseHeadBox(person.landmarks) ?? undefined));
    const skin = (face && skinModelFromMask(image, face.skin)) ?? skinModel(image, person);
    // Where the customer's own top ends, with a little to spare: a new top just short of it is drawn down to it.
    // New bottoms alone go under the old top, which is kept: it hangs over them down to its hem.
    const bottomsOnly = garments.every((g) => g.category === 'bottom');
    const oldHem = bottomsOnly || garments.some((g) => g.category === 'top') ? oldTopHem(image, person, body, skin) : null;
    const coverTo = oldHem === null ? null : oldHem + HEM_SPARE * body.torsoLength;
    // Where the customer's own bottoms begin, and how wide their clothes are, which new garments cover (the layout's
    // body is narrower where arms hang by it).
    const bottoms = garments.some((g) => g.category === 'bottom');
    const coverFrom = bottoms ? oldBottomsTop(image, person, body, skin) : null;
    const clothed = skin ? clothedWidth(image, person, body, skin) : null;
    // Where the customer's own sleeves end, a long one's at the wrist: a new sleeve a little shorter is drawn down to
    // it (short of a long sleeve, it left the old sleeve below, painted as a flat forearm, #8, #20, #22).
    const limbs = skin ? limbPaint(image, person, skin, CORE_RADIUS2) : null;
    const sleeveEnds = limbs ? [limbs.oldSleeveEnd(0), limbs.oldSleeveEnd(1)] : null;
    // A dress ends no lower than the ankles, where both are seen in the photo.
    const ankles = [person.landmarks[POSE.leftAnkle]!, person.landmarks[POSE.rightAnkle]!];
    const seen = ankles.every((a) => a.visibility >= 0.5 && a.x >= 0 && a.y >= 0 && a.x < image.width && a.y < image.height);
    const floor = seen ? (dot(sub(ankles[0]!, body.origin), body.down) + dot(sub(ankles[1]!, body.origin), body.down)) / 2 : null;
    const folded = armsFolded(person, body);
    /** One garment placed at a level of caution (see SAFER), with the cut-out placed; null when it folds even there. */
    const place = (cutout: GarmentCutout, level: number): { garment: GarmentCutout; placement: Placement } | null => {
      const options = {
        scale,
        styling: request.styling,
        tucked: tucked && cutout.category === 'top',
        essential: level > 0,
        coverTo,
        coverFrom,
        clothed,
        sleeveEnds,
        floor,
        folded,
      };
      const garment = level > 1 ? withoutSleeves(cutout) : cutout;
      const placement = placeGarment(garment, body, options);
      return folds(garment, placement) ? null : { garment, placement };
    };
    const longSleeved = limbs !== null && [0, 1].some((arm) => limbs.longSleeve(arm));
    const armLength = (polylineLength(body.arm.left) + polylineLength(body.arm.right)) / 2 / body.unit;
    const overSleeves = (cutout: GarmentCutout): boolean =>
      longSleeved && overLongSleeves(cutout.category, sleeveShare(cutout) * scale.sleeve, armLength);
    // What of the head's region below the chin is the customer's old top (neckline.ts): the shoulders' reach goes
    // over it, and the compositor paints it. Only a top, dress or jacket asks.
    const oldTop = skin && garments.some((g) => g.category !== 'bottom') ? oldTopUnderChin(image, person, skin, face?.oval ?? null) : null;
    /**
     * A top or dress drawn for the body: cloth rests on the shoulders (a flat garment's square corners do not stand
     * off a sloping body) and, where `reach`, reaches up to their outline; long sleeves end at the hands; narrow gaps
     * inside it (between a sleeve and the body) do not let old clothing show through. Not bottoms: between trouser
     * legs a gap is the gap between the legs.
     */
    const onShoulders = (drawn: Layer, reach: boolean): Layer => {
      const rested = restOnShoulders(drawn, body, person);
      const reached = reach ? reachShoulders(rested, body, person, oldTop?.clothing) : rested;
      return closeGaps(hemAtWrists(reached, image, person, skin, body.unit), image, person, skin, body.unit);
    };
    /**
     * Drawn at a level of caution; `over`: each top or dress without sleeves is worn over the customer's own top
     * (their sleeves, neckline and hem show where it does not cover) rather than replacing it.
     */
    const draw = (from: number, over: boolean): { rgb: Uint8Array; violations: Violation[]; level: number } => {
      const layers: PlacedLayer[] = [];
      const violations: Violation[] = [];
      let worst = from;
      for (const cutout of ordered) {
        // A garment whose finer landmarks fold the spline on this body is placed more cautiously; if even the
        // most cautious placement folds it, it cannot be fitted to this pose: a typed failure, never a garbled picture.
        let level = from;
        let placed = place(cutout, level);
        while (!placed && level < SAFER) placed = place(cutout, ++level);
        if (!placed) throw new EngineError('pose_unsupported', `the ${cutout.category} cannot be fitted to this pose without folding it`);
        worst = Math.max(worst, level);
        const drawn = renderGarment(placed.garment, placed.placement, image.width, image.height);
        // It reaches up to the shoulders' outline, unless it hangs from straps or is worn over the customer's top.
        const layered = placed.garment.landmarks.layered === true || (over && sleeveless(cutout));
        const layer = cutout.category === 'bottom' ? drawn : onShoulders(drawn, !layered && !placed.garment.landmarks.straps);
        const skirt = cutout.category === 'bottom' && !cutout.landmarks.crotch;
        violations.push(...layerViolations(layer, cutout.category, body, person, skirt));
        layers.push({ layer, category: cutout.category, skirt, layered, overSleeves: !layered && overSleeves(cutout) });
      }
      const rgb = compose({
        image,
        person,
        layers,
        skin,
        face: face?.oval,
        oldTopHem: bottomsOnly ? oldHem : null,
        oldTop: oldTop ?? undefined,
      });
      const changedFace = faceViolation(image, rgb, person, face?.oval);
      const old = oldClothingViolation(image, rgb, person, skin, layers);
      return { rgb, violations: [...violations, ...(changedFace ? [changedFace] : []), ...(old ? [old] : [])], level: worst };
    };
    // Every result passes the post-conditions (checks.ts); one that fails is placed again more cautiously, and
    // refused when even the most cautious placement fails them. A top or dress without sleeves is drawn worn over the
    // customer's own top, as such layers are worn, when that top has sleeves (painted as bare arms, a T-shirt's or a
    // shirt's sleeves were flat blocks of skin), or when it shows beside the new garment (a cami or a slip dress
    // over a T-shirt: painting a chest and shoulders as skin looked worse than refusing); drawn the one way and failing
    // the checks, it is drawn the other.
    const sleevedCustomer = limbs !== null && (limbs.sleeved(0) || limbs.sleeved(1));
    let over = sleevedCustomer && ordered.some(sleeveless);
    let switched = false;
    let result = await stages.run('place and check', 'generating', 0.6, () => draw(0, over));
    const failed: Violation[] = [];
    while (result.violations.length > 0) {
      failed.push(...result.violations);
      if (result.level >= SAFER) {
        if (!switched && ordered.some(sleeveless) && (over || failed.some((v) => v.check === 'old-clothing'))) {
          over = !over;
          switched = true;
          const how = over ? 'worn over the top' : 'the top beneath removed';
          result = await stages.run(`place and check, ${how}`, 'generating', 0.6, () => draw(0, over));
          continue;
        }
        const details = [...new Set(failed.map((v) => v.detail))].join('; ');
        throw new EngineError('pose_unsupported', `the try-on failed its own checks, so it is not shown: ${details}`);
      }
      const level = result.level + 1;
      result = await stages.run(`place and check, caution ${level}`, 'generating', 0.6 + 0.1 * level, () => draw(level, over));
    }

    const photo = full ? await stages.run('read full photo', 'finishing', 0.84, () => full) : image;
    const rgb = photo === image ? result.rgb : await stages.run('blend back', 'finishing', 0.85, () => blendBack(photo, image, result.rgb));
    // Encoded once, in the format the client asked for.
    const format = request.outputFormat ?? 'png';
    const encoded = await stages.run('encode', 'finishing', 0.9, () =>
      encodePixels({ data: rgb, width: photo.width, height: photo.height, channels: 3 }, format),
    );
    return { image: encoded, format, stages: stages.timings };
  }

  async dispose(): Promise<void> {
    await this.analyzer?.dispose();
    await this.segmenter?.dispose();
    await this.faces?.dispose();
    this.analyzer = null;
    this.segmenter = null;
    this.faces = null;
    this.cutouts.clear();
  }

  /** A garment photo's cut-out, from the cache when the same photo was cut out for the same category before. */
  private async cutOut(
    path: string,
    category: GarmentCategory,
    analyzer: PersonAnalyzer,
    segmenter: GarmentSegmenter,
  ): Promise<GarmentCutout> {
    const bytes = await readFile(path);
    const key = `${createHash('sha256').update(bytes).digest('hex')}:${category}`;
    const hit = this.cutouts.get(key);
    if (hit) {
      // Most recently used last: the first key is the one to drop.
      this.cutouts.delete(key);
      this.cutouts.set(key, hit);
      return hit;
    }
    const cutout = await cutOutGarment(await readRawImage(bytes), { category, analyzer, segmenter });
    this.cutouts.set(key, cutout);
    if (this.cutouts.size > CUTOUT_CACHE) this.cutouts.delete(this.cutouts.keys().next().value!);
    return cutout;
  }
}

/** The cut-out without its sleeve ends: the spline then carries the sleeves as they lie. */
function withoutSleeves(cutout: GarmentCutout): GarmentCutout {
  const { leftSleeveEnd: _left, rightSleeveEnd: _right, sleeveHalfWidth: _half, ...landmarks } = cutout.landmarks;
  return { ...cutout, landmarks };
}

/**
 * The photo to work on, at about WORKING_PIXELS, and (when that is a smaller copy) the full photo's decoding, still
 * running. A photo no bigger than 1.2 × WORKING_PIXELS is its own working copy.
 */
async function readPhoto(path: string): Promise<{ image: RawImage; full: Promise<RawImage> | null }> {
  // Read from disk once: the header, the working copy and the full decode all come from these bytes.
  const bytes = await readFile(path);
  const meta = await sharp(bytes).metadata();
  // EXIF orientations 5–8 turn the picture a quarter: its upright width is the stored height.
  const turned = (meta.orientation ?? 1) >= 5;
  const width = (turned ? meta.height : meta.width) ?? 0;
  const height = (turned ? meta.width : meta.height) ?? 0;
  const pixels = width * height;
  if (pixels <= WORKING_PIXELS * 1.2) return { image: await readRawImage(bytes), full: null };
  const full = readRawImage(bytes);
  // Not left unhandled if the run stops before it is awaited (a refusal, a cancel): the run's own error is the one.
  full.catch(() => undefined);
  const k = Math.sqrt(WORKING_PIXELS / pixels);
  const { data, info } = await sharp(bytes)
    .rotate()
    .resize(Math.round(width * k), Math.round(height * k), { fit: 'fill', kernel: 'lanczos3' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    image: { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 },
    full,
  };
}

/**
 * The try-on made on the working copy, put into the full-resolution photo (whose pixels it overwrites): where the
 * result differs from the working copy (the garments and what they replaced, grown by a pixel and feathered
 * outwards) it is scaled up; everywhere else (face, hands, background) the photo keeps its own full-resolution bytes.
 */
export async function blendBack(photo: RawImage, small: RawImage, result: Uint8Array): Promise<Uint8Array> {
  const { width, height } = small;
  // The photo's own pixels are the result's, blended into in place (the photo is this run's, read for it): a
  // 12 MP photo is 36 MB, not worth a copy.
  let out: Uint8Array;
  if (photo.channels === 3) out = photo.data;
  else {
    out = new Uint8Array(photo.width * photo.height * 3);
    for (let i = 0, j = 0; i < out.length; i += 3, j += 4) out.set(photo.data.subarray(j, j + 3), i);
  }
  // What the try-on changed, and its box (with room for the mask's growth and feather): only that is scaled up.
  const changed = new Uint8Array(width * height);
  for (let i = 0, j = 0; i < changed.length; i++, j += small.channels) {
    if (result[i * 3] === small.data[j] && result[i * 3 + 1] === small.data[j + 1] && result[i * 3 + 2] === small.data[j + 2]) continue;
    changed[i] = 255;
  }
  const changedBox = boxOf(changed, width);
  if (!changedBox) return out;
  const { x0, y0, x1, y1 } = changedBox;
  const pad = 4;
  const box = { left: Math.max(0, x0 - pad), top: Math.max(0, y0 - pad), width: 0, height: 0 };
  box.width = Math.min(width, x1 + pad + 1) - box.left;
  box.height = Math.min(height, y1 + pad + 1) - box.top;
  const kx = photo.width / width;
  const ky = photo.height / height;
  const X0 = Math.round(box.left * kx);
  const Y0 = Math.round(box.top * ky);
  const W = Math.min(photo.width, Math.round((box.left + box.width) * kx)) - X0;
  const H = Math.min(photo.height, Math.round((box.top + box.height) * ky)) - Y0;
  const raw = (data: Uint8Array, channels: 1 | 3) => sharp(data, { raw: { width, height, channels } });
  // The mask is grown and feathered whole; sharp would hand back three channels of a grey image unless told to
  // keep one.
  const grownMask = await raw(changed, 1).dilate(1).blur(1).toColourspace('b-w').raw().toBuffer();
  // Scaled up bilinearly here, only where the grown mask is not zero, and blended in the same pass (on this
  // machine 109 ms for a 12 MP photo, against 175 ms for libvips' resize of the whole box and a second pass). Linear, not Lanczos: the garment in the box was already
  // resampled through the spline. Pixel centres line up: photo pixel X samples working-copy x = (X + 0.5) / k - 0.5.
  const columns = new Int32Array(W);
  const fractions = new Float32Array(W);
  for (let x = 0; x < W; x++) {
    const s = Math.min(width - 1, Math.max(0, (X0 + x + 0.5) / kx - 0.5));
    columns[x] = Math.min(width - 2, Math.floor(s));
    fractions[x] = s - columns[x]!;
  }
  // Each working-copy row's span of mask, and the first photo column that samples each working-copy column: a photo
  // row is walked only where one of its two source rows has mask (the box holds wall and arms too).
  const spans = maskSpans(grownMask, width, height);
  const firstX = new Int32Array(width + 2);
  for (let c = 0, x = 0; c <= width + 1; c++) {
    while (x < W && columns[x]! < c) x++;
    firstX[c] = x;
  }
  for (let y = 0; y < H; y++) {
    const sy = Math.min(height - 1, Math.max(0, (Y0 + y + 0.5) / ky - 0.5));
    const row = Math.min(height - 2, Math.floor(sy));
    const fy = sy - row;
    const lo = Math.min(spans.lo[row]!, spans.lo[row + 1]!);
    const hi = Math.max(spans.hi[row]!, spans.hi[row + 1]!);
    if (hi < lo) continue;
    // Columns whose pair of source columns (c, c + 1) reaches the span: c from lo − 1 to hi.
    const xEnd = firstX[Math.min(width + 1, hi + 1)]!;
    let x = firstX[Math.max(0, lo - 1)]!;
    let o = ((Y0 + y) * photo.width + X0 + x) * 3;
    for (; x < xEnd; x++, o += 3) {
      const fx = fractions[x]!;
      const i00 = row * width + columns[x]!;
      const i10 = i00 + width;
      const w00 = (1 - fx) * (1 - fy);
      const w01 = fx * (1 - fy);
      const w10 = (1 - fx) * fy;
      const w11 = fx * fy;
      // Feathered outwards only: a photo pixel that samples a changed pixel takes the result whole, or the photo's
      // own edge under it (the old waistband's line under a replaced band) shows through the feather as a line.
      const touched = changed[i00]! | changed[i00 + 1]! | changed[i10]! | changed[i10 + 1]!;
      const m = touched ? 255 : grownMask[i00]! * w00 + grownMask[i00 + 1]! * w01 + grownMask[i10]! * w10 + grownMask[i10 + 1]! * w11;
      if (m < 0.5) continue;
      // The three channels unrolled; inside the garment (the mask whole) the result replaces the photo outright.
      const p00 = i00 * 3;
      const p10 = i10 * 3;
      const r = result[p00]! * w00 + result[p00 + 3]! * w01 + result[p10]! * w10 + result[p10 + 3]! * w11;
      const g = result[p00 + 1]! * w00 + result[p00 + 4]! * w01 + result[p10 + 1]! * w10 + result[p10 + 4]! * w11;
      const b = result[p00 + 2]! * w00 + result[p00 + 5]! * w01 + result[p10 + 2]! * w10 + result[p10 + 5]! * w11;
      if (m > 254.5) {
        out[o] = r + 0.5;
        out[o + 1] = g + 0.5;
        out[o + 2] = b + 0.5;
        continue;
      }
      const a = m / 255;
      out[o] = out[o]! + (r - out[o]!) * a + 0.5;
      out[o + 1] = out[o + 1]! + (g - out[o + 1]!) * a + 0.5;
      out[o + 2] = out[o + 2]! + (b - out[o + 2]!) * a + 0.5;
    }
  }
  return out;
}

/** Per row of a mask, the first and last column where it is not zero (lo > hi for an empty row). */
function maskSpans(mask: Uint8Array | Buffer, width: number, height: number): { lo: Int32Array; hi: Int32Array } {
  const lo = new Int32Array(height).fill(width);
  const hi = new Int32Array(height).fill(-1);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let x = 0;
    while (x < width && mask[row + x] === 0) x++;
    if (x === width) continue;
    lo[y] = x;
    let last = width - 1;
    while (mask[row + last] === 0) last--;
    hi[y] = last;
  }
  return { lo, hi };
}

/** A tucked top goes under the bottoms; otherwise bottoms, dress, top, outerwear (layers.ts). */
function order(garment: GarmentCutout, tucked: boolean): number {
  return layerOf(garment.category, { tucked });
}

export const createEngine: CreateEngine = (options) => new WarpEngine((options ?? {}) as WarpOptions);
