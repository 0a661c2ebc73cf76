/**
 * The photorealistic engine: FASHN VTON v1.5 on ONNX Runtime. prepare
 * (check the operator's model.safetensors and DWPose files, build or reuse
 * the ONNX model, open the sessions, time one step) → preprocess (person
 * analysis, pose maps from DWPose when present or else MediaPipe,
 * flat-lay or worn garment, category, resize-and-pad to 576×864) → sample
 * (30 Euler steps with guidance 1.5, the last one conditional only) →
 * postprocess (unpad, scale back to the photo's resolution, blend into the
 * garment's regions only). Several items: one pass per item in layering
 * order, each on the previous result.
 */
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import sharp from 'sharp';
import { encodePixels } from '../encode.ts';
import { layerOf } from '../layers.ts';
import { RunStages } from '../stages.ts';
import { analyseCustomer, findWearer } from '../person.ts';
import { MODELS_DIR } from '../../vision/models.ts';
import { wornGarmentMask } from '../warp/cutout/index.ts';
import { OrtSession, supportedProviders, type ExecutionProvider } from '../../onnx/ort.ts';
import { PersonAnalyzer, readRawImage } from '../../vision/person.ts';
import type { PersonAnalysis, RawImage } from '../../vision/types.ts';
import type { ComputeType } from '../../onnx/graph.ts';
import {
  EngineError,
  type Engine,
  type EngineDescription,
  type EngineRequest,
  type EngineResult,
  type EngineRunOptions,
  type GarmentCategory,
} from '../types.ts';
import { FASHN_VTON_15, type FashnConfig } from './architecture.ts';
import type { AttentionKind } from './blocks.ts';
import { blendImages, blendMask } from './blend.ts';
import { sessionDenoiser, type Conditions, type ModelCategory } from './denoiser.ts';
import { lazily, withFloat32Fallback, type Lazy } from './fp16-fallback.ts';
import { detectFlatLayCategory, greyOutsideGarment, modelCategory, solidGarment, wornCategory } from './garment.ts';
import { WeightsError, openCheckedWeights, prepareModel } from './model-cache.ts';
import { DWPOSE_DIR, DwPose, DwPoseError, findDwPose } from './dwpose.ts';
import { drawPoseGray, drawWholeBodyGray, openPoseKeypoints } from './pose-map.ts';
import { resizeNearest, resizePadPlan, toPaddedTensor, unpadToRgb } from './preprocess.ts';
import { fitted, resized } from './resample.ts';
import { gaussianNoise, sampleEuler, type Denoiser } from './sampler.ts';

/** Where the operator puts the weights: models/fashn-vton-1.5/model.safetensors. */
export const FASHN_DIR = join(MODELS_DIR, 'fashn-vton-1.5');
export const WEIGHTS_URL = 'https://huggingface.co/fashn-ai/fashn-vton-1.5';

/** Engine options (all optional; tests pass a tiny `config` and their own directory). */
export interface FashnEngineOptions {
  id?: string;
  /** Directory holding model.safetensors (default models/fashn-vton-1.5). */
  dir?: string;
  config?: FashnConfig;
  steps?: number;
  guidance?: number;
  /** Time-shift μ of the schedule. */
  shift?: number;
  /** Execution providers to try, best first (default CUDA, DirectML, CoreML; CPU always last). */
  providers?: ExecutionProvider[];
  /** float16 on a GPU provider and float32 on CPU by default. */
  compute?: ComputeType | 'auto';
  attention?: AttentionKind;
  threads?: number;
  /** Where the vision models are (tests). */
  visionModelsDir?: string;
  /** Where DWPose's yolox_l.onnx and dw-ll_ucoco_384.onnx may be (default models/dwpose). */
  dwposeDir?: string;
}

const GPU_PROVIDERS: ExecutionProvider[] = ['cuda', 'dml', 'coreml'];
const ABOUT =
  'A photorealistic picture drawn by a diffusion model: the garment as it would drape on the customer, with their pose and light.';
/** What GET /api/v1/engines adds for a float16 build: overflow is caught, not silent. */
const ABOUT_FLOAT16 = 'Computed in float16; a step that overflows it is computed again in float32.';
/** The reference pre-resizes photos to fit this square before pose detection. */
const PRE_RESIZE = 864;
/** A worn garment smaller than this share of its photo is not one the model can be shown (the warp cut-out's rule). */
const MIN_WORN_GARMENT = 0.02;
/** Kept garment pixels thinner than 2·3 + 1 px at the pre-resized 864 px height are outlines of bare skin. */
const THIN_GARMENT_EDGE = 3;

interface Loaded {
  session: OrtSession;
  /** The float32 model that redoes a float16 step which overflowed; null when computing in float32. */
  float32: Lazy<OrtSession> | null;
  analyzer: PersonAnalyzer;
  /** Null when the DWPose files are absent: poses come from MediaPipe's landmarks. */
  dwpose: DwPose | null;
}

/** Draws a photo's pose map (the photo as the model sees it, and that photo's MediaPipe analysis). */
type PoseMapper = (image: RawImage, analysis: PersonAnalysis) => Promise<Uint8Array>;

/** Creates the engine: readiness is decided here from the weights file alone (its header, not its data). */
export async function createEngine(raw: unknown): Promise<Engine> {
  const options = (raw ?? {}) as FashnEngineOptions;
  const id = options.id ?? 'fashn-vton';
  const config = options.config ?? FASHN_VTON_15;
  const dir = options.dir ?? FASHN_DIR;
  const weightsPath = join(dir, 'model.safetensors');
  const steps = options.steps ?? 30;
  const available = supportedProviders();
  const providers = (options.providers ?? GPU_PROVIDERS).filter((p) => p === 'cpu' || available.includes(p));
  const gpu = providers.find((p) => p !== 'cpu');
  const compute: ComputeType = options.compute && options.compute !== 'auto' ? options.compute : gpu ? 'float16' : 'float32';
  const log = (message: string): void => console.error(`fittingroom: ${id}: ${message}`);
  const dwposeDir = options.dwposeDir ?? DWPOSE_DIR;

  const description: EngineDescription = {
    id,
    name: 'FASHN VTON v1.5 (photorealistic; poses: MediaPipe)',
    ready: false,
    device: gpu ?? 'cpu',
    license: 'Apache-2.0 (code and weights, fashn-ai/fashn-vton-1.5)',
    resolution: { width: config.width, height: config.height },
    honors: ['category', 'seed'],
    typicalSeconds: 0,
    about: compute === 'float16' ? `${ABOUT} ${ABOUT_FLOAT16}` : ABOUT,
  };
  let dwposeFiles: ReturnType<typeof findDwPose> = null;
  try {
    await (await openCheckedWeights(weightsPath, config)).close();
    dwposeFiles = findDwPose(dwposeDir);
    if (dwposeFiles) description.name = 'FASHN VTON v1.5 (photorealistic; poses: DWPose)';
    description.ready = true;
  } catch (error) {
    if (error instanceof DwPoseError) description.reason = error.message;
    else if (error instanceof WeightsError)
      description.reason = `${error.message}. Download model.safetensors from ${WEIGHTS_URL} into ${dir}`;
    else throw error;
  }

  let loaded: Loaded | null = null;

  async function openModel(modelCompute: ComputeType): Promise<OrtSession> {
    const prepared = await prepareModel({ weightsPath, config, compute: modelCompute, attention: options.attention ?? 'fused', log });
    return OrtSession.create(prepared.onnxPath, {
      name: modelCompute === compute ? id : `${id} (${modelCompute})`,
      providers,
      log,
      ...(options.threads ? { threads: options.threads } : {}),
    });
  }

  /** The model bound to one item's conditions; in float16, with every step checked for overflow. */
  function denoiserFor(current: Loaded, conditions: Conditions): Denoiser {
    const plain = sessionDenoiser(current.session, config, conditions);
    const float32 = current.float32;
    if (!float32) return plain;
    return withFloat32Fallback(plain, async () => sessionDenoiser(await float32.get(), config, conditions), log);
  }

  async function load(): Promise<void> {
    // Checked first: wrong DWPose files should not wait for the model to build to be reported.
    const dwpose = dwposeFiles
      ? await DwPose.open(dwposeFiles, { providers, log, ...(options.threads ? { threads: options.threads } : {}) })
      : null;
    const session = await openModel(compute);
    // Built and opened only when a step first overflows: most runs never need it.
    const float32 = compute === 'float16' ? lazily(() => openModel('float32')) : null;
    const analyzer = await PersonAnalyzer.create({ ...(options.visionModelsDir ? { modelsDir: options.visionModelsDir } : {}) });
    loaded = { session, float32, analyzer, dwpose };
    log(dwpose ? `pose maps from DWPose (${dwposeDir})` : `pose maps from MediaPipe (no DWPose files in ${dwposeDir})`);
    description.device = session.provider;
    // One guided and one conditional-only step on blank inputs: the measured time per try-on.
    const pixels = config.width * config.height;
    const blank: Conditions = {
      agnostic: new Float32Array(3 * pixels),
      garment: new Float32Array(3 * pixels),
      personPose: new Float32Array(pixels),
      garmentPose: new Float32Array(pixels),
      category: 'tops',
    };
    const denoise = sessionDenoiser(session, config, blank);
    const x = new Float32Array(3 * pixels);
    const t0 = performance.now();
    await denoise(x, 0.5, true);
    const t1 = performance.now();
    await denoise(x, 0.5, false);
    const t2 = performance.now();
    description.typicalSeconds = Math.max(1, Math.round(((steps - 1) * (t1 - t0) + (t2 - t1)) / 1000 + 1));
    log(
      `ready on ${session.provider} (${compute}): ${((t1 - t0) / 1000).toFixed(2)} s per guided step, about ${description.typicalSeconds} s per item`,
    );
  }

  async function run(request: EngineRequest, runOptions: EngineRunOptions): Promise<EngineResult> {
    if (!loaded) throw new EngineError('engine_unavailable', `${id} is not loaded`);
    const current = loaded;
    const { analyzer, dwpose } = current;
    const poseMap: PoseMapper = dwpose
      ? async (image) => drawWholeBodyGray(await dwpose.estimate(image), image.width, image.height)
      : async (image, analysis) =>
          drawPoseGray(openPoseKeypoints(analysis.landmarks, analysis.width, analysis.height), image.width, image.height);
    const stages = new RunStages(runOptions);
    let photo = await stages.run('read photo', 'preprocessing', 0.01, () => readRawImage(request.selfie.path));
    const person = await stages.run('analyse customer', 'preprocessing', 0.02, () => analyseCustomer(analyzer, photo, 'the photo'));
    const seed = request.seed ?? randomInt(2 ** 31);
    const order = request.items.map((item, index) => ({ item, index, category: request.categories[index] ?? 'auto' }));
    order.sort((a, b) => layerOf(a.category) - layerOf(b.category) || a.index - b.index);

    for (const [pass, { item, category: requested }] of order.entries()) {
      const base = pass / order.length;
      const span = 1 / order.length;
      const { conditions, personPlan } = await stages.run(`condition item ${pass + 1}`, 'preprocessing', 0.03 + 0.02 * base, async () => {
        const personSmall = fitted(photo, PRE_RESIZE);
        const personPlan = resizePadPlan(personSmall.width, personSmall.height, config.width, config.height);
        const personPose = await poseMap(personSmall, person);
        const garment = await prepareGarment(analyzer, poseMap, await readRawImage(item.path), requested);
        const garmentPlan = resizePadPlan(garment.image.width, garment.image.height, config.width, config.height);
        const conditions: Conditions = {
          agnostic: toPaddedTensor(resized(personSmall, personPlan), 3, personPlan),
          personPose: toPaddedTensor(
            resizeNearest(personPose, personSmall.width, personSmall.height, personPlan.width, personPlan.height),
            1,
            personPlan,
          ),
          garment: toPaddedTensor(resized(garment.image, garmentPlan), 3, garmentPlan),
          garmentPose: toPaddedTensor(
            resizeNearest(garment.pose, garment.image.width, garment.image.height, garmentPlan.width, garmentPlan.height),
            1,
            garmentPlan,
          ),
          category: garment.category,
        };
        return { conditions, personPlan };
      });
      const progressAt = (done: number, total: number): number => 0.05 + 0.9 * (base + (span * done) / total);
      const sampled = await stages.run(`sample item ${pass + 1}`, 'generating', progressAt(0, 1), () =>
        sampleEuler(gaussianNoise(3 * config.width * config.height, seed + pass), denoiserFor(current, conditions), {
          steps,
          guidance: options.guidance ?? 1.5,
          mu: options.shift ?? 1.5,
          signal: stages.signal,
          onStep: (done, total) => runOptions.onProgress({ stage: 'generating', progress: progressAt(done, total) }),
        }),
      );
      photo = await stages.run(`blend item ${pass + 1}`, 'generating', progressAt(1, 1), async () => {
        const generated = await sharp(unpadToRgb(sampled, personPlan), {
          raw: { width: personPlan.width, height: personPlan.height, channels: 3 },
        })
          .resize(photo.width, photo.height, { fit: 'fill', kernel: 'lanczos3' })
          .raw()
          .toBuffer();
        const mask = blendMask(person.layout, conditions.category);
        const data = blendImages(photo.data, new Uint8Array(generated.buffer, generated.byteOffset, generated.length), mask);
        return { data, width: photo.width, height: photo.height, channels: 3 };
      });
    }
    // Encoded once, in the format the client asked for.
    const format = request.outputFormat ?? 'png';
    const encoded = await stages.run('encode', 'finishing', 0.97, () =>
      encodePixels({ data: photo.data, width: photo.width, height: photo.height, channels: 3 }, format),
    );
    return { image: encoded, format, stages: stages.timings };
  }

  return {
    id,
    describe: () => ({ ...description, resolution: { ...description.resolution }, honors: [...description.honors] }),
    load,
    run,
    async dispose() {
      const current = loaded;
      loaded = null;
      await Promise.all([current?.session.release(), current?.float32?.release(), current?.analyzer.dispose(), current?.dwpose?.release()]);
    },
  };
}

/** A garment photo ready for the model: worn (pose drawn, the rest greyed) or flat-lay (empty pose), and its category. */
async function prepareGarment(
  analyzer: PersonAnalyzer,
  poseMap: PoseMapper,
  photo: RawImage,
  requested: GarmentCategory,
): Promise<{ image: RawImage; pose: Uint8Array; category: ModelCategory }> {
  const image = fitted(photo, PRE_RESIZE);
  const wearer = await findWearer(analyzer, image);
  if (!wearer) {
    const category = requested === 'auto' ? detectFlatLayCategory(image.data, image.width, image.height) : modelCategory(requested);
    return { image, pose: new Uint8Array(image.width * image.height), category };
  }
  const category = requested === 'auto' ? 'tops' : modelCategory(requested);
  const garment = wornGarmentMask(image, wearer, wornCategory(category));
  if (garment.pixels < MIN_WORN_GARMENT * image.width * image.height) {
    throw new EngineError('garment_not_detected', `the model in the garment photo wears no ${category} that can be cut out`);
  }
  return {
    image: { ...image, data: greyOutsideGarment(image.data, solidGarment(garment.mask, THIN_GARMENT_EDGE)) },
    pose: await poseMap(image, wearer),
    category,
  };
}
