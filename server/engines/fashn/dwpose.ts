/**
 * DWPose on ONNX Runtime, for the pose maps FASHN VTON was trained on. The
 * operator may put DWPose's published ONNX files (the YOLOX-L person
 * detector and the DW-LL whole-body pose model, 384×288) in models/dwpose/;
 * their tensors are found by rank and shape when opened, never by name
 * (SimCC's x and y told apart by their bins), since exports name them
 * differently. A photo → people boxes (or the whole photo when none) → one
 * crop and one pose run per box → the best person's body, hands and face.
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

/** The shapes DWPose's models must declare (−1, a symbolic size, matches any); names are not checked, since exports name them differently. */
export const DWPOSE_SHAPES = {
  detector: { input: [1, 3, DETECTOR_SIZE, DETECTOR_SIZE], output: [1, DETECTOR_ROWS, DETECTOR_COLUMNS] },
  pose: {
    input: [1, 3, POSE_HEIGHT, POSE_WIDTH],
    simccX: [1, WHOLEBODY_KEYPOINTS, POSE_WIDTH * SIMCC_SPLIT],
    simccY: [1, WHOLEBODY_KEYPOINTS, POSE_HEIGHT * SIMCC_SPLIT],
  },
} as const;

/** A tensor as a model declares it. */
interface Declared {
  name: string;
  dims: readonly number[];
}

/** The detector's tensors, found by shape. */
interface DetectorIo {
  input: string;
  output: string;
}

/** The pose model's tensors, found by shape: SimCC's x bins are the input's width × 2, its y bins the height × 2. */
interface PoseIo {
  input: string;
  simccX: string;
  simccY: string;
}

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

const shape = (dims: readonly number[]): string => `[${dims.join(',')}]`;
const describe = (tensors: readonly Declared[]): string => tensors.map((t) => `${t.name} ${shape(t.dims)}`).join(', ') || 'none';

/** A declared shape fits a wanted one: the same rank, every size equal or symbolic. */
function fits(dims: readonly number[], wanted: readonly number[]): boolean {
  return dims.length === wanted.length && dims.every((d, k) => d === -1 || d === wanted[k]);
}

function declared(session: OrtSession): { inputs: Declared[]; outputs: Declared[] } {
  return {
    inputs: session.inputNames.map((name) => ({ name, dims: session.inputShape(name) })),
    outputs: session.outputNames.map((name) => ({ name, dims: session.outputShape(name) })),
  };
}

/** The error for a model whose tensors are not the expected ones: what it declares, what is wanted, what to do. */
function misfit(file: string, found: { inputs: Declared[]; outputs: Declared[] }, expected: string): DwPoseError {
  return new DwPoseError(
    `DWPose: ${file} has inputs ${describe(found.inputs)} and outputs ${describe(found.outputs)}; ` +
      `expected ${expected} (names are not checked). Use the files from ${DWPOSE_URL}, or remove both to use MediaPipe poses`,
  );
}

/** YOLOX-L: one image input [1,3,640,640] and one output of 8400 rows of 85 values. */
function detectorIo(session: OrtSession, file: string): DetectorIo {
  const found = declared(session);
  const { input, output } = DWPOSE_SHAPES.detector;
  const [image] = found.inputs;
  const [rows] = found.outputs;
  if (found.inputs.length !== 1 || found.outputs.length !== 1 || !fits(image!.dims, input) || !fits(rows!.dims, output)) {
    throw misfit(file, found, `one input ${shape(input)} and one output ${shape(output)}`);
  }
  return { input: image!.name, output: rows!.name };
}

/** DW-LL: one image input [1,3,384,288] and two SimCC outputs, told apart by their bins: 2 per pixel of width, 2 per pixel of height. */
function poseIo(session: OrtSession, file: string): PoseIo {
  const found = declared(session);
  const { input, simccX, simccY } = DWPOSE_SHAPES.pose;
  const expected = `one input ${shape(input)} and two outputs ${shape(simccX)} (x) and ${shape(simccY)} (y), in either order`;
  const [image] = found.inputs;
  if (found.inputs.length !== 1 || found.outputs.length !== 2 || !fits(image!.dims, input)) throw misfit(file, found, expected);
  // A symbolic input size stands for the published one.
  const [height, width] = [image!.dims[2] === -1 ? POSE_HEIGHT : image!.dims[2]!, image!.dims[3] === -1 ? POSE_WIDTH : image!.dims[3]!];
  const binsOf = (bins: number): Declared[] =>
    found.outputs.filter((o) => fits(o.dims, [1, WHOLEBODY_KEYPOINTS, bins]) && o.dims[2] === bins);
  const [x, y] = [binsOf(width * SIMCC_SPLIT), binsOf(height * SIMCC_SPLIT)];
  if (x.length !== 1 || y.length !== 1) throw misfit(file, found, expected);
  return { input: image!.name, simccX: x[0]!.name, simccY: y[0]!.name };
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
    private readonly detectorTensors: DetectorIo,
    private readonly pose: OrtSession,
    private readonly poseTensors: PoseIo,
  ) {}

  /** Opens and checks both models by their tensors' shapes; a DwPoseError names the file and what is wrong. */
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
      const detectorTensors = detectorIo(detector, DETECTOR_FILE);
      pose = await open(files.pose, POSE_FILE);
      const poseTensors = poseIo(pose, POSE_FILE);
      options.log?.(
        `DWPose tensors by shape: ${DETECTOR_FILE} ${detectorTensors.input} → ${detectorTensors.output}; ` +
          `${POSE_FILE} ${poseTensors.input} → x ${poseTensors.simccX}, y ${poseTensors.simccY}`,
      );
      return new DwPose(detector, detectorTensors, pose, poseTensors);
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
    const { detector, pose } = DWPOSE_SHAPES;
    const detected = await this.detector.run({ [this.detectorTensors.input]: { data: tensor, dims: [...detector.input] } });
    const boxes = personBoxes(this.output(detected, this.detectorTensors.output, detector.output), ratio);
    const regions = boxes.length > 0 ? boxes : [{ x1: 0, y1: 0, x2: image.width, y2: image.height }];
    const people: PersonKeypoints[] = [];
    for (const box of regions) {
      const plan = cropPlan(box);
      const out = await this.pose.run({ [this.poseTensors.input]: { data: poseInput(bgr, plan), dims: [...pose.input] } });
      const simccX = this.output(out, this.poseTensors.simccX, pose.simccX);
      const simccY = this.output(out, this.poseTensors.simccY, pose.simccY);
      people.push(toOpenPoseOrder(decodeSimcc(simccX, simccY, WHOLEBODY_KEYPOINTS, plan)));
    }
    return wholeBodyPose(people[bestPerson(people)]!, image.width, image.height);
  }

  /** Releases both sessions. */
  async release(): Promise<void> {
    await Promise.all([this.detector.release(), this.pose.release()]);
  }

  /** An output's values, after checking the shape it actually came back with (symbolic sizes resolve only at run time). */
  private output(
    results: Record<string, { data: Float32Array; dims: readonly number[] }>,
    name: string,
    wanted: readonly number[],
  ): Float32Array {
    const tensor = results[name];
    if (!tensor || shape(tensor.dims) !== shape(wanted)) {
      throw new Error(`DWPose: output ${name} is ${tensor ? shape(tensor.dims) : 'missing'}, expected ${shape(wanted)}`);
    }
    return tensor.data;
  }
}
