/**
 * Binds the ONNX model to one try-on's conditions: a guided step runs a
 * batch of two (the conditional row, then the reference's "dropped" row with
 * the person image, poses and garment zeroed and the "none" category); the
 * conditional-only last step runs one row.
 */
import type { OrtSession, FloatTensor } from '../../onnx/ort.ts';
import type { FashnConfig } from './architecture.ts';
import { MODEL_OUTPUT } from './model-graph.ts';
import type { Denoiser } from './sampler.ts';

/** Category labels of the model (0 is "none", used by the unconditional row). */
export const CATEGORY_LABEL = { tops: 1, bottoms: 2, 'one-pieces': 3 } as const;
export type ModelCategory = keyof typeof CATEGORY_LABEL;

/** One try-on's model inputs, each [channels, height, width] in −1..1. */
export interface Conditions {
  agnostic: Float32Array;
  garment: Float32Array;
  personPose: Float32Array;
  garmentPose: Float32Array;
  category: ModelCategory;
}

function rows(conditional: Float32Array, batch: number, dims: number[]): FloatTensor {
  // The unconditional row, when there is one, is zeros (apply_conditional_dropout without a null tensor).
  const data = new Float32Array(conditional.length * batch);
  data.set(conditional);
  return { data, dims: [batch, ...dims] };
}

/** A Denoiser that runs `session` on `conditions`. */
export function sessionDenoiser(session: Pick<OrtSession, 'run'>, config: FashnConfig, conditions: Conditions): Denoiser {
  const { height: H, width: W, channels: C } = config;
  const image = [C, H, W];
  const pose = [1, H, W];
  return async (x, t, guided) => {
    const batch = guided ? 2 : 1;
    const category = new Float32Array(batch * (config.classes + 1));
    category[CATEGORY_LABEL[conditions.category]] = 1;
    if (guided) category[config.classes + 1] = 1;
    const xs = new Float32Array(x.length * batch);
    for (let b = 0; b < batch; b++) xs.set(x, b * x.length);
    const out = await session.run({
      x: { data: xs, dims: [batch, ...image] },
      t: { data: new Float32Array(batch).fill(t), dims: [batch] },
      agnostic: rows(conditions.agnostic, batch, image),
      garment: rows(conditions.garment, batch, image),
      person_pose: rows(conditions.personPose, batch, pose),
      garment_pose: rows(conditions.garmentPose, batch, pose),
      category: { data: category, dims: [batch, config.classes + 1] },
    });
    const velocity = out[MODEL_OUTPUT];
    if (!velocity) throw new Error(`the model returned no ${MODEL_OUTPUT}`);
    const size = x.length;
    return guided
      ? { conditional: velocity.data.slice(0, size), unconditional: velocity.data.slice(size, 2 * size) }
      : { conditional: velocity.data.slice(0, size) };
  };
}
