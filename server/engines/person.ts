/**
 * The person analysis as engines use it, in one place: the customer's photo must show one person (vision's
 * refusals become the engine's typed failures), while a garment photo may or may not show a model wearing it.
 */
import type { PersonAnalyzer } from '../vision/person.ts';
import { VisionError, type PersonAnalysis, type RawImage } from '../vision/types.ts';
import { EngineError } from './types.ts';

/** The customer in a photo; no person, several people or an unusable pose fail the try-on with that code. */
export async function analyseCustomer(analyzer: PersonAnalyzer, image: RawImage, what = 'the customer photo'): Promise<PersonAnalysis> {
  try {
    return await analyzer.analyze(image);
  } catch (error) {
    if (error instanceof VisionError) throw new EngineError(error.code, `${what}: ${error.message}`);
    throw error;
  }
}

/** The model wearing a garment in its photo, or null when it is laid flat (no person found, or not one). */
export async function findWearer(analyzer: PersonAnalyzer, image: RawImage): Promise<PersonAnalysis | null> {
  try {
    return await analyzer.analyze(image);
  } catch (error) {
    if (error instanceof VisionError) return null;
    throw error;
  }
}
