/**
 * Stand-ins for DWPose's two ONNX files: graphs with the published models'
 * input and output shapes (under other names) whose outputs are constants the test
 * chooses (a detector row per box, a SimCC peak per keypoint), so the real
 * sessions, checks and decoding run against answers computed by hand.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DETECTOR_FILE, DWPOSE_SHAPES, POSE_FILE } from '../../server/engines/fashn/dwpose.ts';
import { DETECTOR_COLUMNS, DETECTOR_ROWS, WHOLEBODY_KEYPOINTS } from '../../server/engines/fashn/dwpose-decode.ts';
import { OnnxGraph, encodeInline } from '../../server/onnx/graph.ts';

/** A tensor a stand-in declares. */
export interface TensorDecl {
  name: string;
  dims: number[];
}

/** The row of YOLOX's output for grid cell (gx, gy) at `stride` (cells run row by row, strides 8, 16, 32). */
export function detectorRow(stride: 8 | 16 | 32, gx: number, gy: number): number {
  const before = { 8: 0, 16: 80 * 80, 32: 80 * 80 + 40 * 40 }[stride];
  return before + gy * (640 / stride) + gx;
}

/** A detector output with the given rows set to [dx, dy, log-w, log-h, objectness, person, …] (everything else 0). */
export function detectorOutput(rows: { row: number; values: number[] }[]): Float32Array {
  const out = new Float32Array(DETECTOR_ROWS * DETECTOR_COLUMNS);
  for (const { row, values } of rows) out.set(values, row * DETECTOR_COLUMNS);
  return out;
}

/** SimCC outputs with one peak per listed keypoint (bins of 0.5 px in the 288×384 crop); other keypoints score 0. */
export function simccOutputs(peaks: { k: number; x: number; y: number; score: number }[]): { x: Float32Array; y: Float32Array } {
  const [bx, by] = [576, 768];
  const x = new Float32Array(WHOLEBODY_KEYPOINTS * bx);
  const y = new Float32Array(WHOLEBODY_KEYPOINTS * by);
  for (const p of peaks) {
    x[p.k * bx + p.x] = p.score;
    y[p.k * by + p.y] = p.score;
  }
  return { x, y };
}

/** A model with the given inputs (unused) and each output a constant. */
export async function constantModel(inputs: TensorDecl[], outputs: (TensorDecl & { values: Float32Array })[]): Promise<Uint8Array> {
  const g = new OnnxGraph('float32');
  for (const input of inputs) g.input(input);
  for (const output of outputs) g.output(g.constant32(output.values, output.dims), { name: output.name, dims: output.dims });
  return encodeInline(g, { read: () => Promise.reject(new Error('no weights')) }, 'dwpose-stand-in');
}

/**
 * Tensor names unlike the published exports' (`images` → `output`; `input`
 * → `simcc_x`, `simcc_y`), and SimCC's two outputs declared y first under
 * each other's names: the engine must find every tensor by its shape.
 */
export const STAND_IN_NAMES = {
  detectorInput: 'pixels',
  detectorOutput: 'detections',
  poseInput: 'crop',
  /** The output holding SimCC's x bins [1,133,576]. */
  simccX: 'simcc_y',
  /** The output holding SimCC's y bins [1,133,768]. */
  simccY: 'simcc_x',
} as const;

/** Writes yolox_l.onnx and dw-ll_ucoco_384.onnx stand-ins into `dir`; `detectorOutputs` replaces the detector's output declaration. */
export async function writeTinyDwPose(
  dir: string,
  values: { detector: Float32Array; simccX: Float32Array; simccY: Float32Array },
  detectorOutputs?: TensorDecl[],
): Promise<void> {
  const { detector, pose } = DWPOSE_SHAPES;
  const detectorModel = await constantModel(
    [{ name: STAND_IN_NAMES.detectorInput, dims: [...detector.input] }],
    (detectorOutputs ?? [{ name: STAND_IN_NAMES.detectorOutput, dims: [...detector.output] }]).map((o) => ({
      ...o,
      values: values.detector.slice(
        0,
        o.dims.reduce((a, b) => a * b, 1),
      ),
    })),
  );
  const poseModel = await constantModel(
    [{ name: STAND_IN_NAMES.poseInput, dims: [...pose.input] }],
    [
      { name: STAND_IN_NAMES.simccY, dims: [...pose.simccY], values: values.simccY },
      { name: STAND_IN_NAMES.simccX, dims: [...pose.simccX], values: values.simccX },
    ],
  );
  writeFileSync(join(dir, DETECTOR_FILE), detectorModel);
  writeFileSync(join(dir, POSE_FILE), poseModel);
}
