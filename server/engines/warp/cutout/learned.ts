/**
 * Which pixels of a garment photo are the garment, as a learned model sees
 * it: U²-Netp (U-2-Net, Qin et al. 2020, Apache-2.0), a salient-object
 * segmenter, at its native 320×320 input. prepare (one session) →
 * preprocess (the photo stretched to 320×320, divided by its brightest
 * value, ImageNet mean and deviation, NCHW) → model → postprocess (the
 * fused map stretched to 0..255 and scaled back to the photo's size).
 *
 * It decides garment or not where the classical matte cannot (a white tee
 * on a white or light grey wall, black on white with shadows); the
 * classical matte keeps the edge where both agree (see combine.ts).
 */
import sharp from 'sharp';
import { visionModelPath } from '../../../vision/models.ts';
import { OrtSession } from '../../../onnx/ort.ts';
import type { Mask, RawImage } from '../../../vision/types.ts';

const SIZE = 320;
const MEAN = [0.485, 0.456, 0.406] as const;
const STD = [0.229, 0.224, 0.225] as const;
const INPUT = 'input.1';
/** The fused saliency map (U²-Netp's other six outputs are its side maps). */
const OUTPUT = '1959';

export class GarmentSegmenter {
  private constructor(private readonly session: OrtSession) {}

  static async create(options: { threads?: number; modelsDir?: string } = {}): Promise<GarmentSegmenter> {
    const path = await visionModelPath('u2netp', options.modelsDir ? { dir: options.modelsDir } : {});
    return new GarmentSegmenter(await OrtSession.create(path, { threads: options.threads ?? 1, name: 'u2netp' }));
  }

  /** The garment's probability per pixel of the photo (0..255). */
  async segment(image: RawImage): Promise<Mask> {
    const small = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels } })
      .removeAlpha()
      .resize(SIZE, SIZE, { fit: 'fill', kernel: 'lanczos3' })
      .raw()
      .toBuffer();
    const out = await this.session.run({ [INPUT]: { data: inputTensor(small), dims: [1, 3, SIZE, SIZE] } });
    const map = out[OUTPUT];
    if (!map) throw new Error(`u2netp: no output ${OUTPUT}`);
    const levels = stretch(map.data);
    // sharp would hand back three channels of a grey image unless told to keep one.
    const full = await sharp(levels, { raw: { width: SIZE, height: SIZE, channels: 1 } })
      .resize(image.width, image.height, { fit: 'fill', kernel: 'linear' })
      .toColourspace('b-w')
      .raw()
      .toBuffer();
    if (full.length !== image.width * image.height) throw new Error(`u2netp: the scaled map has ${full.length} bytes, not one per pixel`);
    return { data: new Uint8Array(full.buffer, full.byteOffset, full.length), width: image.width, height: image.height };
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

/** RGB bytes (SIZE×SIZE×3) as U²-Netp's input: over the brightest value, then ImageNet's normalisation, planar. */
export function inputTensor(rgb: Uint8Array): Float32Array {
  let brightest = 1;
  for (let i = 0; i < rgb.length; i++) if (rgb[i]! > brightest) brightest = rgb[i]!;
  const plane = SIZE * SIZE;
  const tensor = new Float32Array(3 * plane);
  for (let c = 0; c < 3; c++) {
    const mean = MEAN[c]!;
    const std = STD[c]!;
    for (let i = 0, j = c; i < plane; i++, j += 3) tensor[c * plane + i] = (rgb[j]! / brightest - mean) / std;
  }
  return tensor;
}

/** Below this peak the model sees nothing salient in the photo: the map is noise, not a garment. */
const NOTHING_SALIENT = 0.2;

/**
 * The map stretched so its lowest value is 0 and its highest 255 (as rembg does); all 0 when the model
 * sees nothing salient (stretching noise would make a garment of it).
 */
export function stretch(map: Float32Array): Uint8Array {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of map) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const out = new Uint8Array(map.length);
  if (!(hi >= NOTHING_SALIENT) || !(hi - lo > 1e-6)) return out;
  const k = 255 / (hi - lo);
  for (let i = 0; i < map.length; i++) out[i] = Math.round((map[i]! - lo) * k);
  return out;
}
