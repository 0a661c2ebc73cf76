/**
 * The camera's live framing guide: the GUI sends a small JPEG of the preview
 * every so often and gets back one piece of advice (step back, come closer,
 * move left or right, or hold still). The rules are a pure function of the
 * pose landmarks; `FramingGuide` owns one lazily loaded person analyzer in
 * the HTTP process, runs one frame at a time and lets the models go when
 * the camera has been idle for a while.
 */
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import sharp, { type Metadata } from 'sharp';
import { ApiError } from '../kernel/errors.ts';
import { PersonAnalyzer } from '../vision/person.ts';
import { POSE, VisionError, type Landmark, type RawImage } from '../vision/types.ts';
import type { FramingAdvice, FramingAdviceCode } from './contract.ts';

/** What each piece of advice says, addressed to the person in front of the camera. */
export const FRAMING_MESSAGES: Readonly<Record<FramingAdviceCode, string>> = Object.freeze({
  'no-person': 'No one is in view. Stand in front of the camera.',
  'several-people': 'Only the customer should be in view.',
  'step-back': 'Step back until your head and hips are in the picture.',
  'come-closer': 'Come a little closer to the camera.',
  'move-left': 'Move a little to your left.',
  'move-right': 'Move a little to your right.',
  ok: 'Good. Hold still for the photo.',
});

/** The thresholds behind the advice, as shares of the frame's width or height. */
export const FRAMING_RULES = Object.freeze({
  /** Head, shoulders and hips must stay this far inside every edge. */
  margin: 0.04,
  /** Below this shoulder width (share of the frame's width) the person is too far away. */
  minShoulderWidth: 0.12,
  /** Above this shoulder width the person is too near for the hips to fit beside the arms. */
  maxShoulderWidth: 0.6,
  /** The body's centre may stray this far from the frame's middle. */
  maxOffset: 0.15,
  /** A landmark with less presence than this is taken as outside the frame. */
  minPresence: 0.5,
  /** The top of the head sits this share of the nose-to-shoulders distance above the nose. */
  headAboveNose: 0.6,
});

/** The largest frame accepted (the GUI sends about 256 px on the long side). */
export const FRAMING_MAX_BYTES = 200 * 1024;
const MAX_SIDE = 1024;
const MIN_SIDE = 32;
/** Frames are analysed at most this large on their long side. */
const ANALYSIS_SIDE = 320;
/** The models are released after this long without a frame. */
const IDLE_RELEASE_MS = 120_000;

function advice(code: FramingAdviceCode, box?: FramingAdvice['box']): FramingAdvice {
  return box ? { advice: code, message: FRAMING_MESSAGES[code], box } : { advice: code, message: FRAMING_MESSAGES[code] };
}

/**
 * The advice for one person's landmarks (image pixels, MediaPipe's 33) in a
 * `width`×`height` frame. A try-on needs the head down to the hips, inside
 * the frame with a margin, and the body near the middle. Left and right are
 * the person's own: the frame is the camera's view (not mirrored), so a body
 * on the frame's left stands to its own right and should move to its left.
 */
export function adviceFor(landmarks: readonly Landmark[], width: number, height: number): FramingAdvice {
  const rules = FRAMING_RULES;
  const at = (index: number): Landmark => landmarks[index] ?? { x: Number.NaN, y: Number.NaN, z: 0, visibility: 0, presence: 0 };
  const point = (index: number): { x: number; y: number; inFrame: boolean } => {
    const p = at(index);
    return { x: p.x / width, y: p.y / height, inFrame: p.presence >= rules.minPresence };
  };
  const nose = point(POSE.nose);
  const shoulders = [point(POSE.leftShoulder), point(POSE.rightShoulder)];
  const hips = [point(POSE.leftHip), point(POSE.rightHip)];
  const mid = (a: { x: number; y: number }, b: { x: number; y: number }): { x: number; y: number } => ({
    x: (a.x + b.x) / 2,
    y: (a.y + b.y) / 2,
  });
  const shoulderMid = mid(shoulders[0]!, shoulders[1]!);
  const hipMid = mid(hips[0]!, hips[1]!);
  const headTop = { x: nose.x, y: nose.y - rules.headAboveNose * Math.abs(shoulderMid.y - nose.y), inFrame: nose.inFrame };
  const required = [headTop, ...shoulders, ...hips];

  const visible = landmarks.filter((p) => p.presence >= rules.minPresence);
  const xs = [...visible.map((p) => p.x / width), headTop.x];
  const ys = [...visible.map((p) => p.y / height), headTop.y];
  const clamp = (value: number): number => Math.min(1, Math.max(0, value));
  const [left, right, top, bottom] = [clamp(Math.min(...xs)), clamp(Math.max(...xs)), clamp(Math.min(...ys)), clamp(Math.max(...ys))];
  const box = { x: left, y: top, width: right - left, height: bottom - top };

  if (required.some((p) => !Number.isFinite(p.x) || !Number.isFinite(p.y))) return advice('step-back', box);
  const shoulderWidth = Math.hypot((shoulders[0]!.x - shoulders[1]!.x) * width, (shoulders[0]!.y - shoulders[1]!.y) * height) / width;
  const span = Math.max(...required.map((p) => p.y)) - Math.min(...required.map((p) => p.y));
  if (span > 1 - 2 * rules.margin || shoulderWidth > rules.maxShoulderWidth) return advice('step-back', box);

  const offset = (shoulderMid.x + hipMid.x) / 2 - 0.5;
  if (offset < -rules.maxOffset) return advice('move-left', box);
  if (offset > rules.maxOffset) return advice('move-right', box);

  const inside = (p: { x: number; y: number; inFrame: boolean }): boolean =>
    p.inFrame && p.x >= rules.margin && p.x <= 1 - rules.margin && p.y >= rules.margin && p.y <= 1 - rules.margin;
  if (!required.every(inside)) return advice('step-back', box);
  if (shoulderWidth < rules.minShoulderWidth) return advice('come-closer', box);
  return advice('ok', box);
}

/** Reads a JPEG frame body: 415 for anything but image/jpeg, 413 past FRAMING_MAX_BYTES. */
export function jpegFrameBody(): Array<RequestHandler | ErrorRequestHandler> {
  const requireJpeg: RequestHandler = (req, _res, next) => {
    if (Number(req.get('content-length') ?? '0') > FRAMING_MAX_BYTES) {
      next(new ApiError('payload_too_large', `A framing frame may be at most ${FRAMING_MAX_BYTES} bytes.`));
    } else if (!req.is('image/jpeg')) {
      next(new ApiError('unsupported_media_type', 'Send the frame as image/jpeg.'));
    } else next();
  };
  const read = express.raw({ type: 'image/jpeg', limit: FRAMING_MAX_BYTES });
  const translate: ErrorRequestHandler = (error: { type?: string }, _req, _res, next) => {
    if (error.type === 'entity.too.large')
      next(new ApiError('payload_too_large', `A framing frame may be at most ${FRAMING_MAX_BYTES} bytes.`));
    else if (error.type === 'request.aborted') next(new ApiError('invalid_request', 'The frame was cut off.'));
    else next(error);
  };
  return [requireJpeg, read, translate];
}

/** Decodes a frame to RGB at most ANALYSIS_SIDE on its long side; 422 unless it is a JPEG of sensible size. */
export async function decodeFrame(bytes: Uint8Array): Promise<RawImage> {
  const refuse = (why: string): ApiError => new ApiError('invalid_image', `The frame ${why}.`);
  let meta: Metadata;
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    throw refuse('is not a readable image');
  }
  if (meta.format !== 'jpeg') throw refuse('must be a JPEG');
  const { width = 0, height = 0 } = meta;
  if (Math.min(width, height) < MIN_SIDE || Math.max(width, height) > MAX_SIDE) {
    throw refuse(`must be ${MIN_SIDE} to ${MAX_SIDE} pixels on each side (it is ${width}×${height})`);
  }
  try {
    const { data, info } = await sharp(bytes, { limitInputPixels: MAX_SIDE * MAX_SIDE })
      .resize(ANALYSIS_SIDE, ANALYSIS_SIDE, { fit: 'inside', withoutEnlargement: true })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
  } catch {
    throw refuse('could not be decoded');
  }
}

export interface FramingGuideOptions {
  /** Loads the analyzer (default: PersonAnalyzer.create with one thread). */
  createAnalyzer?: () => Promise<Pick<PersonAnalyzer, 'analyze' | 'dispose'>>;
  log?: (message: string, error?: unknown) => void;
}

/**
 * One person analyzer for framing advice, loaded on the first frame. Frames
 * are analysed one at a time: a frame that arrives while another is being
 * analysed is refused at once (429, retry in a second) instead of queueing,
 * so a stale frame is never answered late; the GUI simply sends its next one.
 */
export class FramingGuide {
  private analyzer: Promise<Pick<PersonAnalyzer, 'analyze' | 'dispose'>> | null = null;
  private running: Promise<unknown> | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly createAnalyzer: NonNullable<FramingGuideOptions['createAnalyzer']>;
  private readonly log: NonNullable<FramingGuideOptions['log']>;

  constructor(options: FramingGuideOptions = {}) {
    this.createAnalyzer = options.createAnalyzer ?? (() => PersonAnalyzer.create({ threads: 1 }));
    this.log = options.log ?? (() => undefined);
  }

  /** Whether the models are loaded (or loading). */
  get loaded(): boolean {
    return this.analyzer !== null;
  }

  /** The advice for one JPEG frame. */
  async advise(jpeg: Uint8Array): Promise<FramingAdvice> {
    if (this.closed) throw new ApiError('unavailable', 'The appliance is stopping.');
    if (this.running) {
      throw new ApiError('rate_limited', 'The framing guide is still looking at the previous frame; send the next one.', {
        retryAfterSeconds: 1,
      });
    }
    const run = this.run(jpeg);
    this.running = run;
    try {
      return await run;
    } finally {
      this.running = null;
      this.scheduleRelease();
    }
  }

  private async run(jpeg: Uint8Array): Promise<FramingAdvice> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const image = await decodeFrame(jpeg);
    this.analyzer ??= this.createAnalyzer();
    let analyzer: Awaited<typeof this.analyzer>;
    try {
      analyzer = await this.analyzer;
    } catch (error) {
      this.analyzer = null;
      this.log('loading the framing guide’s models failed', error);
      throw new ApiError('unavailable', 'The framing guide’s models are not ready yet; try again in a minute.');
    }
    try {
      const analysis = await analyzer.analyze(image);
      return adviceFor(analysis.landmarks, analysis.width, analysis.height);
    } catch (error) {
      if (error instanceof VisionError && error.code === 'multiple_people') return advice('several-people');
      if (error instanceof VisionError) return advice('no-person');
      throw error;
    }
  }

  private scheduleRelease(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.closed || !this.analyzer) return;
    this.idleTimer = setTimeout(() => void this.release(), IDLE_RELEASE_MS);
    this.idleTimer.unref();
  }

  /** Lets the models go (they load again with the next frame). */
  async release(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.running?.catch(() => undefined);
    const loading = this.analyzer;
    this.analyzer = null;
    const analyzer = await loading?.catch(() => null);
    await analyzer?.dispose();
  }

  /** Stops for good: waits for the frame in progress, then releases the models. */
  async dispose(): Promise<void> {
    this.closed = true;
    await this.release();
  }
}
