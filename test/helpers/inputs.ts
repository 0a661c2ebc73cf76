/** What tests submit: base64 inputs for the HTTP API (made once per test process), and try-on parameters. */
import type { GenerationParams } from '../../server/store/schema.ts';

let cached: Promise<{ selfie: string; item: string }> | undefined;

/** A person photo and a garment photo as base64 (real fixtures when available). */
export function sampleInputs(): Promise<{ selfie: string; item: string }> {
  cached ??= (async () => {
    // Imported here, not above: it loads sharp, which a test that only wants plainParams() need not wait for.
    const { validJpeg } = await import('./hostile-images.ts');
    return {
      selfie: (await validJpeg(384, 512)).toString('base64'),
      item: (await validJpeg(300, 400)).toString('base64'),
    };
  })();
  return cached;
}

/** A minimal valid submission body. */
export async function submission(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const { selfie, item } = await sampleInputs();
  return { selfie, items: [item], size: 'M', ...extra };
}

/** A try-on's parameters as the API stores them for a plain submission (size M, JPEG out), with `extra` over them. */
export function plainParams(extra: Partial<GenerationParams> = {}): GenerationParams {
  return { size: 'M', personSize: 'M', fit: 'regular', styling: [], categories: ['auto'], outputFormat: 'jpeg', ...extra };
}
