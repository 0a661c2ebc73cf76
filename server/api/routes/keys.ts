/** Key management (contract 2.7); admin keys only. */
import { Router } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import { checkKeyFields, publicKey } from '../../keys/api-keys.ts';
import type { AppDeps } from '../deps.ts';

/** Routes under /api/v1/keys. */
export function keyRoutes({ accounts, clock, config }: AppDeps): Router {
  const router = Router();

  router.get('/keys', async (_req, res) => {
    res.json((await accounts.keys()).map(publicKey));
  });

  router.post('/keys', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { name, scope } = checkKeyFields(body.name, body.scope ?? 'standard');
    const { record, key } = await accounts.createKey(name, scope, clock());
    res.status(201).json({ ...publicKey(record), key });
  });

  router.delete('/keys/:id', async (req, res) => {
    await accounts.revokeKey(req.params.id!, clock());
    res.status(204).end();
  });

  router.post('/keys/:id/rotate', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const grace = body.graceSeconds ?? config.keyRotationGraceSeconds;
    if (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0 || grace > 30 * 86_400) {
      throw new ApiError('validation_failed', 'graceSeconds must be an integer from 0 to 2592000.', {
        errors: [{ field: 'graceSeconds', message: 'must be an integer from 0 to 2592000' }],
      });
    }
    const { record, key, previous } = await accounts.rotateKey(req.params.id!, clock(), grace);
    res.status(201).json({ ...publicKey(record), key, previous: publicKey(previous) });
  });

  return router;
}
