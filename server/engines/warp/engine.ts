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
import { VisionError, type PersonAnalysis, type RawImage } from '../../vision/types.ts';
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
import { compose, type PlacedLayer } from './composite/compose.ts';
import { bodyFrame } from './fit/body.ts';
import { placeGarment } from './fit/place.ts';
import { folds, renderGarment } from './fit/render.ts';
import { garmentScale } from './fit/sizing.ts';
import { cutOutGarment } from './cutout/index.ts';
import { GarmentSegmenter } from './cutout/learned.ts';
import type { GarmentCutout, WarpCategory } from './types.ts';

export interface WarpOptions {
  /** ONNX Runtime threads for the person analysis (default 1). */
  threads?: number;
}

/** Cut-outs kept per engine process, by garment photo and requested category (catalogue garments come back). */
const CUTOUT_CACHE = 32;

/** Drawing order: what is worn underneath goes first. */
const LAYER_ORDER: Record<WarpCategory, number> = { bottom: 0, dress: 1, top: 2, outerwear: 3 };

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new EngineError('engine_failed', 'canceled');
}

export class WarpEngine implements Engine {
  readonly id = 'warp';
  private analyzer: PersonAnalyzer | null = null;
  private segmenter: GarmentSegmenter | null = null;
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
      license: 'engine: proprietary; pose and segmentation models: Apache-2.0 (Google MediaPipe)',
      resolution: { width: 768, height: 1024 },
      honors: ['size', 'personSize', 'fit', 'styling', 'categories'],
      typicalSeconds: 1,
    };
  }

  async load(): Promise<void> {
    try {
      this.analyzer ??= await PersonAnalyzer.create({ threads: this.options.threads ?? 1 });
      this.segmenter ??= await GarmentSegmenter.create({ threads: this.options.threads ?? 1 });
      this.loadError = null;
    } catch (error) {
      this.loadError = `the pose, segmentation and cut-out models could not be loaded: ${(error as Error).message}`;
      throw error;
    }
  }

  async run(request: EngineRequest, options: EngineRunOptions): Promise<EngineResult> {
    const analyzer = this.analyzer;
    const segmenter = this.segmenter;
    if (!analyzer || !segmenter) throw new EngineError('engine_unavailable', 'the warp engine is not loaded', true);
    const { signal, onProgress } = options;
    onProgress({ stage: 'preprocessing', progress: 0.05 });
    const image = await readRawImage(request.selfie.path);
    const person = await analyse(analyzer, image, 'the customer photo');
    throwIfAborted(signal);

    const garments: GarmentCutout[] = [];
    for (const [k, item] of request.items.entries()) {
      onProgress({ stage: 'preprocessing', progress: 0.1 + (0.3 * k) / request.items.length });
      garments.push(await this.cutOut(item.path, request.categories[k] ?? 'auto', analyzer, segmenter));
      throwIfAborted(signal);
    }

    onProgress({ stage: 'generating', progress: 0.5 });
    const body = bodyFrame(person);
    const scale = garmentScale(request.size, request.personSize, request.fit);
    // Tucked: the top ends at the waistband, into new bottoms (drawn over it) or the customer's own.
    const tucked = request.styling.includes('tucked');
    const ordered = [...garments].sort((a, b) => order(a, tucked) - order(b, tucked));
    const layers: PlacedLayer[] = [];
    for (const cutout of ordered) {
      const options = { scale, styling: request.styling, tucked: tucked && cutout.category === 'top' };
      let placement = placeGarment(cutout, body, options);
      // A garment whose finer landmarks fold the spline on this body is placed by its essential points; if even
      // those fold it, it cannot be fitted to this pose: a typed failure, never a garbled picture.
      if (folds(cutout, placement)) placement = placeGarment(cutout, body, { ...options, essential: true });
      if (folds(cutout, placement))
        throw new EngineError('pose_unsupported', `the ${cutout.category} cannot be fitted to this pose without folding it`);
      layers.push({ layer: renderGarment(cutout, placement, image.width, image.height), category: cutout.category });
      throwIfAborted(signal);
    }

    onProgress({ stage: 'finishing', progress: 0.85 });
    const rgb = compose({ image, person, layers });
    const png = await sharp(rgb, { raw: { width: image.width, height: image.height, channels: 3 } })
      .png({ compressionLevel: 2 })
      .toBuffer();
    return { image: new Uint8Array(png.buffer, png.byteOffset, png.length), format: 'png' };
  }

  async dispose(): Promise<void> {
    await this.analyzer?.dispose();
    await this.segmenter?.dispose();
    this.analyzer = null;
    this.segmenter = null;
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

/** A tucked top goes under the bottoms; otherwise bottoms, dress, top, outerwear. */
function order(garment: GarmentCutout, tucked: boolean): number {
  if (tucked && garment.category === 'top') return -1;
  return LAYER_ORDER[garment.category];
}

/** The person analysis, with vision's refusals turned into the engine's typed failures. */
async function analyse(analyzer: PersonAnalyzer, image: RawImage, what: string): Promise<PersonAnalysis> {
  try {
    return await analyzer.analyze(image);
  } catch (error) {
    if (error instanceof VisionError) throw new EngineError(error.code, `${what}: ${error.message}`);
    throw error;
  }
}

export const createEngine: CreateEngine = (options) => new WarpEngine((options ?? {}) as WarpOptions);
