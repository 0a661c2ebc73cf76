/** Base64 inputs for submissions, made once per test process. */
import { validJpeg } from './hostile-images.ts';

let cached: Promise<{ selfie: string; item: string }> | undefined;

/** A person photo and a garment photo as base64 (real fixtures when available). */
export function sampleInputs(): Promise<{ selfie: string; item: string }> {
  cached ??= (async () => ({
    selfie: (await validJpeg(384, 512)).toString('base64'),
    item: (await validJpeg(300, 400)).toString('base64'),
  }))();
  return cached;
}

/** A minimal valid submission body. */
export async function submission(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const { selfie, item } = await sampleInputs();
  return { selfie, items: [item], size: 'M', ...extra };
}
