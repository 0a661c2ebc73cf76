/**
 * Checks the operator's FASHN VTON weights and builds the ONNX model once,
 * ahead of the first start (the engine would otherwise build it while it
 * loads, which takes minutes). Usage:
 *   npm run fashn:prepare -- [models/fashn-vton-1.5] [--compute float16|float32]
 * Prints what is wrong with the weights, or where the built model is.
 */
import { join } from 'node:path';
import { FASHN_VTON_15, parameterCount } from '../server/engines/fashn/architecture.ts';
import { FASHN_DIR, WEIGHTS_URL } from '../server/engines/fashn/engine.ts';
import { WeightsError, prepareModel } from '../server/engines/fashn/model-cache.ts';

const args = process.argv.slice(2);
const computeAt = args.indexOf('--compute');
const compute = computeAt >= 0 ? args[computeAt + 1] : 'float16';
if (compute !== 'float16' && compute !== 'float32') throw new Error(`--compute must be float16 or float32, not ${compute}`);
const dir = args.find((a, i) => !a.startsWith('--') && i !== computeAt + 1) ?? FASHN_DIR;

try {
  const prepared = await prepareModel({
    weightsPath: join(dir, 'model.safetensors'),
    config: FASHN_VTON_15,
    compute,
    attention: 'fused',
    log: (message) => console.log(message),
  });
  console.log(
    `weights OK (${parameterCount(FASHN_VTON_15).toLocaleString('en')} parameters); model ${prepared.cached ? 'already built' : 'built'}: ${prepared.onnxPath}`,
  );
} catch (error) {
  if (!(error instanceof WeightsError)) throw error;
  console.error(`${error.message}\nDownload model.safetensors from ${WEIGHTS_URL} into ${dir}`);
  process.exitCode = 1;
}
