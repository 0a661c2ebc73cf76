/**
 * GET /take/<token>: the customer's phone downloads one try-on's picture with the link from its QR code (see
 * gui/share.ts). No key: the token is the permission. An unknown, expired or erased link is a plain 404.
 */
import { Router } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import { contentType } from '../../images/files.ts';
import { sharedTryOn } from '../../gui/share.ts';
import type { AppDeps } from '../deps.ts';

const EXTENSIONS = { jpeg: 'jpg', png: 'png', webp: 'webp' } as const;

export function takeHomeRoutes({ accounts, state, images, clock }: AppDeps): Router {
  const router = Router();
  router.get('/take/:token', async (req, res) => {
    const genId = await sharedTryOn(accounts, req.params.token!, clock());
    const record = genId === null ? undefined : await state.generation(genId);
    if (!record?.result) throw new ApiError('not_found', 'This link has expired, or the picture was erased.');
    const bytes = await images.get(record.result);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Disposition', `attachment; filename="try-on.${EXTENSIONS[record.result.format]}"`);
    res.type(contentType(record.result.format)).send(bytes);
  });
  return router;
}
