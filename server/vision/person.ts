/**
 * "Where is this person's body?": the whole person analysis, as MediaPipe's
 * pose graph does it, on ONNX Runtime. prepare (sessions, once) → detect
 * (letterboxed detector, anchors, weighted NMS) → crop (rotated ROI from the
 * detector's keypoints) → landmarks (with a second pass when the first crop
 * was poor) → matte (selfie segmentation fused with the landmark model's
 * mask, edges refined) → layout (body parts). One analyzer per process;
 * `analyze` calls are serialised by the caller (engines run one job at a time).
 */
import sharp from 'sharp';
import { HeuristicBodyParser } from './body-layout.ts';
import { selfieMask, personMatte } from './matte.ts';
import { visionModelPath } from './models.ts';
import { OrtSession, type ExecutionProvider } from '../onnx/ort.ts';
import { detectionRoi, detectPoses, poseAnchors, type Anchor, type PoseDetection } from './pose-detector.ts';
import { LANDMARK_INPUT, landmarksInRoi, landmarksRoi, type RoiLandmarks } from './pose-landmarks.ts';
import { VisionError, type BodyParser, type PersonAnalysis, type RawImage, type RotatedRect } from './types.ts';

export interface AnalyzerOptions {
  /** Landmark model: `full` (default, more accurate) or `lite` (faster). */
  landmarkModel?: 'lite' | 'full';
  /** ONNX Runtime intra-op threads per session (default 1: engines run beside the HTTP server). */
  threads?: number;
  providers?: ExecutionProvider[];
  /** Where models/ is (tests). */
  modelsDir?: string;
  /** Replaces the landmark-and-colour body parser. */
  parser?: BodyParser;
}

/** Below this, the landmark model does not see a person in its crop. */
const MIN_PRESENCE = 0.5;
/**
 * A second detection counts as another person when its score reaches this
 * and its box is at least this share of the first one's area (small
 * reflections and posters do not count).
 */
const SECOND_PERSON_SCORE = 0.6;
const SECOND_PERSON_AREA = 0.25;
/**
 * The first crop was poor when the crop the landmarks imply is this far from
 * it (centre shift as a share of its side, size ratio, rotation in radians).
 * On the fixture photos a good crop differs by at most 0.04, 1.10 and 0.13.
 */
const POOR_CROP = { shift: 0.08, size: 1.2, rotation: 0.25 };

/** Timings of the last analysis, in milliseconds, by stage. */
export interface AnalysisTimings {
  detect: number;
  landmarks: number;
  matte: number;
  layout: number;
  total: number;
  /** Whether the landmark model ran a second time on a better crop. */
  refined: boolean;
}

export class PersonAnalyzer {
  private readonly anchors: Anchor[] = poseAnchors();
  /** Stage timings of the most recent `analyze`. */
  lastTimings: AnalysisTimings | null = null;

  private constructor(
    private readonly detector: OrtSession,
    private readonly landmarker: OrtSession,
    private readonly segmenter: OrtSession,
    private readonly parser: BodyParser,
  ) {}

  /** Loads the three models (converting them first if needed). */
  static async create(options: AnalyzerOptions = {}): Promise<PersonAnalyzer> {
    const threads = options.threads ?? 1;
    const session = async (id: string): Promise<OrtSession> =>
      OrtSession.create(await visionModelPath(id, options.modelsDir ? { dir: options.modelsDir } : {}), {
        threads,
        providers: options.providers,
        name: id,
      });
    const [detector, landmarker, segmenter] = await Promise.all([
      session('pose_detection'),
      session(`pose_landmark_${options.landmarkModel ?? 'full'}`),
      session('selfie_segmentation'),
    ]);
    return new PersonAnalyzer(detector, landmarker, segmenter, options.parser ?? new HeuristicBodyParser());
  }

  /** Finds the one person in the photo: landmarks, matte and layout; VisionError when there is none or more than one. */
  async analyze(image: RawImage): Promise<PersonAnalysis> {
    const t0 = performance.now();
    const detections = await detectPoses(this.detector, image, this.anchors);
    const person = onePerson(detections);
    const t1 = performance.now();

    const [pose, selfie] = [await this.landmarks(image, detectionRoi(person)), await selfieMask(this.segmenter, image)];
    const t2 = performance.now();
    const matte = personMatte({ image, selfie, poseMask: pose.result.mask, poseMaskSize: LANDMARK_INPUT, roi: pose.result.roi });
    const t3 = performance.now();
    const layout = this.parser.parse(image, pose.result.landmarks, matte);
    const t4 = performance.now();
    this.lastTimings = { detect: t1 - t0, landmarks: t2 - t1, matte: t3 - t2, layout: t4 - t3, total: t4 - t0, refined: pose.refined };
    return {
      width: image.width,
      height: image.height,
      landmarks: pose.result.landmarks,
      score: person.score,
      roi: pose.result.roi,
      matte,
      layout,
    };
  }

  /** The landmark model on the detector's crop, and once more on the crop its own answer implies when the first was poor. */
  private async landmarks(image: RawImage, roi: RotatedRect): Promise<{ result: RoiLandmarks; refined: boolean }> {
    const first = await landmarksInRoi(this.landmarker, image, roi);
    const next = landmarksRoi(first);
    if (first.presence >= MIN_PRESENCE && !poorCrop(roi, next)) return { result: first, refined: false };
    const second = await landmarksInRoi(this.landmarker, image, next);
    const best = second.presence >= first.presence ? second : first;
    if (best.presence < MIN_PRESENCE) {
      throw new VisionError(
        'no_person_detected',
        `the pose model does not see a person where the detector found one (presence ${best.presence.toFixed(2)})`,
      );
    }
    return { result: best, refined: best === second };
  }

  async dispose(): Promise<void> {
    await Promise.all([this.detector.release(), this.landmarker.release(), this.segmenter.release()]);
  }
}

/** The one person among the detections, or a typed refusal. */
export function onePerson(detections: readonly PoseDetection[]): PoseDetection {
  const first = detections[0];
  if (!first) throw new VisionError('no_person_detected', 'no person was found in the photo');
  const area = (d: PoseDetection): number => d.box.width * d.box.height;
  const others = detections.slice(1).filter((d) => d.score >= SECOND_PERSON_SCORE && area(d) >= SECOND_PERSON_AREA * area(first));
  if (others.length > 0) {
    throw new VisionError('multiple_people', `${others.length + 1} people were found in the photo; it must show one`);
  }
  return first;
}

/** Whether the crop the landmarks imply is far from the one they came from. */
export function poorCrop(used: RotatedRect, implied: RotatedRect): boolean {
  const shift = Math.hypot(implied.cx - used.cx, implied.cy - used.cy) / used.width;
  const size = Math.max(implied.width / used.width, used.width / implied.width);
  const turn = Math.abs(Math.atan2(Math.sin(implied.rotation - used.rotation), Math.cos(implied.rotation - used.rotation)));
  return shift > POOR_CROP.shift || size > POOR_CROP.size || turn > POOR_CROP.rotation;
}

/** Decodes an image file into RGB pixels for `analyze` (EXIF orientation applied). */
export async function readRawImage(path: string | Uint8Array): Promise<RawImage> {
  const { data, info } = await sharp(path).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height, channels: 3 };
}
