/**
 * Converts the vision models named in models/manifest.json from their npm
 * packages to ONNX under models/ (npm runs this after install; the appliance
 * also does it on first start if they are missing). Cached files are kept.
 * Usage: node --import tsx scripts/convert-models.ts [--weights float32]
 */
import { ensureVisionModels } from '../server/vision/models.ts';

const weights =
  process.argv.includes('--weights') && process.argv[process.argv.indexOf('--weights') + 1] === 'float32' ? 'float32' : 'float16';
try {
  const ready = await ensureVisionModels({ weights, log: (message) => console.log(`fittingroom: ${message}`) });
  const cached = ready.filter((m) => !m.converted).map((m) => m.entry.id);
  if (cached.length > 0) console.log(`fittingroom: vision models up to date: ${cached.join(', ')}`);
} catch (error) {
  console.error(`fittingroom: converting the vision models failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
