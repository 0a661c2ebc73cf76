/**
 * DWPose on ONNX Runtime, for the pose maps FASHN VTON was trained on. The
 * operator may put DWPose's published ONNX files (the YOLOX-L person
 * detector and the DW-LL whole-body pose model, 384×288) in models/dwpose/;
 * they are checked by input and output names and shapes when opened. A
 * photo → people boxes (or the whole photo when none) → one crop and one
 * pose run per box → the best person's body, hands and face.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MODELS_DIR } from '../../vision/models.ts';
import { OrtSession, type ExecutionProvider } from '../../onnx/ort.ts';
import type { RawImage } from '../../vision/types.ts';
import {
  DETECTOR_COLUMNS,
  DETECTOR_ROWS,
  DETECTOR_SIZE,
  POSE_HEIGHT,
  POSE_WIDTH,
  SIMCC_SPLIT,
  WHOLEBODY_KEYPOINTS,
  bestPerson,
  cropPlan,
  decodeSimcc,
  detectorInput,
  personBoxes,
  poseInput,
  toBgr,
  toOpenPoseOrder,
  wholeBodyPose,
  type Bgr,
  type PersonKeypoints,
} from './dwpose-decode.ts';
import type { WholeBodyPose } from './pose-map.ts';

/** Where the operator puts the DWPose files (the reference keeps them in weights/dwpose/). */
export const DWPOSE_DIR = join(MODELS_DIR, 'dwpose');
export const DETECTOR_FILE = 'yolox_l.onnx';
export const POSE_FILE = 'dw-ll_ucoco_384.onnx';
export const DWPOSE_URL = 'https://huggingface.co/fashn-ai/DWPose';

/** A tensor a DWPose model must declare: its name and shape (a symbolic batch is accepted). */
interface TensorSpec {
  name: string;
  dims: readonly number[];
}

/** The published models' inputs and outputs (YOLOX's export names; mmdeploy's SimCC names). */
export const DWPOSE_IO: Readonly<Record<'detector' | 'pose', { inputs: TensorSpec[]; outputs: TensorSpec[] }>> = {
  detector: {
    inputs: [{ name: 'images', dims: [1, 3, DETECTOR_SIZE, DETECTOR_SIZE] }],
    outputs: [{ name: 'output', dims: [1, DETECTOR_ROWS, DETECTOR_COLUMNS] }],
  },
  pose: {
    inputs: [{ name: 'input', dims: [1, 3, POSE_HEIGHT, POSE_WIDTH] }],
    outputs: [
      { name: 'simcc_x', dims: [1, WHOLEBODY_KEYPOINTS, POSE_WIDTH * SIMCC_SPLIT] },
      { name: 'simcc_y', dims: [1, WHOLEBODY_KEYPOINTS, POSE_HEIGHT * SIMCC_SPLIT] },
    ],
  },
};

/** DWPose files that are present but cannot be used; the message says what is wrong and what to do. */
export class DwPoseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DwPoseError';
  }
}

/** The DWPose files in `dir`: both paths, or null when neither is there. One without the other is an error. */
export function findDwPose(dir: string): { detector: string; pose: string } | null {
  const detector = join(dir, DETECTOR_FILE);
  const pose = join(dir, POSE_FILE);
  const [hasDetector, hasPose] = [existsSync(detector), existsSync(pose)];
  if (!hasDetector && !hasPose) return null;
  if (!hasDetector || !hasPose) {
    throw new DwPoseError(
      `DWPose: ${hasDetector ? POSE_FILE : DETECTOR_FILE} is missing in ${dir} (both ${DETECTOR_FILE} and ${POSE_FILE} are needed; ` +
        `download them from ${DWPOSE_URL}, or remove ${hasDetector ? DETECTOR_FILE : POSE_FILE} to use MediaPipe poses)`,
    );
  }
  return { detector, pose };
}

const describeSpecs = (specs: readonly TensorSpec[]): string => specs.map((s) => `${s.name} [${s.dims.join(',')}]`).join(', ');

/** Throws a DwPoseError unless the session's inputs and outputs are exactly `expected` (−1 matches any size). */
function checkSession(session: OrtSession, file: string, expected: { inputs: TensorSpec[]; outputs: TensorSpec[] }): void {
  const inputs = session.inputNames.map((name) => ({ name, dims: session.inputShape(name) }));
  const outputs = session.outputNames.map((name) => ({ name, dims: session.outputShape(name) }));
  const fits = (actual: TensorSpec[], wanted: TensorSpec[]): boolean =>
    actual.length === wanted.length &&
    wanted.every((w) => {
      const a = actual.find((t) => t.name === w.name);
      return !!a && a.dims.length === w.dims.length && a.dims.every((d, k) => d === -1 || d === w.dims[k]);
    });
  if (!fits(inputs, expected.inputs) || !fits(outputs, expected.outputs)) {
    throw new DwPoseError(
      `DWPose: ${file} has inputs ${describeSpecs(inputs)} and outputs ${describeSpecs(outputs)}; ` +
        `expected inputs ${describeSpecs(expected.inputs)} and outputs ${describeSpecs(expected.outputs)}. ` +
        `Use the files from ${DWPOSE_URL}, or remove both to use MediaPipe poses`,
    );
  }
}

export interface DwPoseOptions {
  providers?: ExecutionProvider[];
  threads?: number;
  log?: (message: string) => void;
}

/** DWPose's two sessions and the whole-body pose of a photo's most prominent person. */
export class DwPose {
  private constructor(
    private readonly detector: OrtSession,
    private readonly pose: OrtSession,
  ) {}

  /** Opens and checks both models; a DwPoseError names the file and what is wrong. */
  static async open(files: { detector: string; pose: string }, options: DwPoseOptions = {}): Promise<DwPose> {
    const sessionOptions = (name: string) => ({
      name: `dwpose ${name}`,
      ...(options.providers ? { providers: options.providers } : {}),
      ...(options.threads ? { threads: options.threads } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
    const open = async (path: string, file: string): Promise<OrtSession> => {
      try {
        return await OrtSession.create(path, sessionOptions(file));
      } catch (error) {
        throw new DwPoseError(
          `DWPose: ${file} could not be opened (${(error as Error).message.split('\n')[0]}); use the file from ${DWPOSE_URL}`,
        );
      }
    };
    const detector = await open(files.detector, DETECTOR_FILE);
    let pose: OrtSession | null = null;
    try {
      checkSession(detector, DETECTOR_FILE, DWPOSE_IO.detector);
      pose = await open(files.pose, POSE_FILE);
      checkSession(pose, POSE_FILE, DWPOSE_IO.pose);
      return new DwPose(detector, pose);
    } catch (error) {
      await Promise.all([detector.release(), pose?.release()]);
      throw error;
    }
  }

  /** The pose of the photo's most prominent person, in 0…1 coordinates of `image` (RGB). */
  async estimate(image: RawImage): Promise<WholeBodyPose> {
    if (image.channels !== 3) throw new Error(`DWPose needs an RGB image, not ${image.channels} channels`);
    // The reference hands DWPose BGR pixels (OpenCV's order); the detector and the normalisation see them as such.
    const bgr: Bgr = { data: toBgr(image.data), width: image.width, height: image.height };
    const { tensor, ratio } = detectorInput(bgr);
    const detected = await this.detector.run({ images: { data: tensor, dims: [1, 3, DETECTOR_SIZE, DETECTOR_SIZE] } });
    const boxes = personBoxes(this.output(detected, 'output', DWPOSE_IO.detector.outputs[0]!), ratio);
    const regions = boxes.length > 0 ? boxes : [{ x1: 0, y1: 0, x2: image.width, y2: image.height }];
    const people: PersonKeypoints[] = [];
    for (const box of regions) {
      const plan = cropPlan(box);
      const out = await this.pose.run({ input: { data: poseInput(bgr, plan), dims: [1, 3, POSE_HEIGHT, POSE_WIDTH] } });
      const [specX, specY] = DWPOSE_IO.pose.outputs as [TensorSpec, TensorSpec];
      const simccX = this.output(out, 'simcc_x', specX);
      const simccY = this.output(out, 'simcc_y', specY);
      people.push(toOpenPoseOrder(decodeSimcc(simccX, simccY, WHOLEBODY_KEYPOINTS, plan)));
    }
    return wholeBodyPose(people[bestPerson(people)]!, image.width, image.height);
  }

  /** Releases both sessions. */
  async release(): Promise<void> {
    await Promise.all([this.detector.release(), this.pose.release()]);
  }

  private output(results: Record<string, { data: Float32Array; dims: readonly number[] }>, name: string, spec: TensorSpec): Float32Array {
    const tensor = results[name];
    if (!tensor || tensor.dims.join(',') !== spec.dims.join(',')) {
      throw new Error(`DWPose: output ${name} is [${tensor?.dims.join(',') ?? 'missing'}], expected [${spec.dims.join(',')}]`);
    }
    return tensor.data;
  }
}
