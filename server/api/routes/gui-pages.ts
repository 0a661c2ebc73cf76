/**
 * GET / serves the shop-floor GUI (renderer/, bundled by bundle.ts) with a
 * strict Content-Security-Policy: only this appliance's own scripts, styles,
 * images and connections; the camera's stream and local blobs for pictures.
 */
import { Router, type Response } from 'express';
import { guiAssets } from '../../gui/bundle.ts';

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob: data:",
  "media-src 'self' blob: mediastream:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function secure(res: Response): Response {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
  return res;
}

/** The GUI's page and its two bundled assets. */
export function guiPages(log: (message: string, error?: unknown) => void): Router {
  const router = Router();
  router.get(['/', '/index.html'], async (_req, res) => {
    try {
      secure(res)
        .type('html')
        .send((await guiAssets()).html);
    } catch (error) {
      log('bundling the GUI failed', error);
      res.status(500).type('text/plain').send('The GUI could not be prepared; the API at /api/v1 still works. See the appliance log.');
    }
  });
  router.get('/app.js', async (_req, res) => {
    secure(res)
      .type('text/javascript')
      .send((await guiAssets()).js);
  });
  router.get('/app.css', async (_req, res) => {
    secure(res)
      .type('text/css')
      .send((await guiAssets()).css);
  });
  return router;
}
