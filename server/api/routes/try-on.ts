/**
 * The try-on calls (contract 2.1–2.5): submit, status with bounded wait,
 * image, cancel, erase, list.
 */
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import { authOf, viewerOf } from '../request-context.ts';
import { checkSubmission } from '../../tryons/validate.ts';
import { generationView, statusUrl, type ViewContext } from '../wire.ts';
import { parseIdempotencyKey } from '../../idempotency/idempotency.ts';
import { contentType } from '../../images/files.ts';
import type { GenerationStatus } from '../../store/schema.ts';
import type { AppDeps } from '../deps.ts';

const STATUSES: GenerationStatus[] = ['pending', 'complete', 'failed', 'canceled'];

/** The base of absolute URLs in replies. */
export function baseUrlOf(req: Request, publicBaseUrl: string | null): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? '127.0.0.1'}`;
}

/** Routes under /api/v1/try-on: each parses the request, calls the try-on service once, and renders. */
export function tryOnRoutes(deps: AppDeps): Router {
  const { state, images, tryOns, clock, config } = deps;
  const router = Router();
  // Status, list and image replies can carry a customer's photo or its try-on: never kept by a cache.
  router.use('/try-on', (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  const viewContext = async (req: Request): Promise<ViewContext> => ({
    creditsRemaining: (await state.account(clock())).creditsRemaining,
    now: clock(),
    baseUrl: baseUrlOf(req, config.publicBaseUrl),
    live: (id) => tryOns.live(id),
  });

  router.post('/try-on', async (req: Request, res: Response) => {
    const auth = authOf(req);
    const idempotencyKey = parseIdempotencyKey(req.get('idempotency-key'));
    const submission = checkSubmission(req.body);
    const base = baseUrlOf(req, config.publicBaseUrl);
    const reply = await tryOns.submit({
      submission,
      body: req.body as object,
      keyId: auth.key.id,
      lineageId: auth.key.lineageId,
      idempotencyKey,
      statusUrl: (genId) => statusUrl(base, genId),
    });
    res.status(reply.status).set(reply.headers);
    if (reply.replayed) res.set('Idempotent-Replayed', 'true');
    res.send(reply.body);
  });

  router.get('/try-on', async (req, res) => {
    const status = req.query.status;
    if (status !== undefined && !STATUSES.includes(status as GenerationStatus))
      throw new ApiError('invalid_request', `status must be one of ${STATUSES.join(', ')}.`);
    const limit = req.query.limit === undefined ? 20 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new ApiError('invalid_request', 'limit must be an integer from 1 to 100.');
    const cursor = req.query.cursor;
    if (cursor !== undefined && (typeof cursor !== 'string' || !/^gen_[0-9A-Z]{26}$/.test(cursor)))
      throw new ApiError('invalid_request', 'cursor is not a cursor from a previous page.');
    const page = await tryOns.list(
      {
        limit,
        ...(status === undefined ? {} : { status: status as GenerationStatus }),
        ...(cursor === undefined ? {} : { cursor }),
      },
      viewerOf(req),
    );
    const context = await viewContext(req);
    res.json({ data: await Promise.all(page.records.map((record) => generationView(record, context))), nextCursor: page.nextCursor });
  });

  router.get('/try-on/:genId', async (req, res) => {
    const id = req.params.genId!;
    const waitSeconds = parseWait(req, res, config.waitDefaultSeconds, config.waitMaxSeconds);
    const viewer = viewerOf(req);
    await tryOns.find(id, viewer);
    if (waitSeconds > 0) {
      const gone = new AbortController();
      const abort = () => gone.abort();
      res.on('close', abort);
      await tryOns.waitForTerminal(id, waitSeconds, gone.signal, viewer);
      res.off('close', abort);
    }
    const record = await tryOns.find(id, viewer);
    if (record.status === 'pending') res.setHeader('Retry-After', '1');
    res.json(await generationView(record, await viewContext(req), (image) => images.get(image)));
  });

  router.get('/try-on/:genId/image', async (req, res) => {
    const { bytes, format } = await tryOns.image(req.params.genId!, viewerOf(req));
    res.status(200).type(contentType(format));
    res.send(bytes);
  });

  router.post('/try-on/:genId/cancel', async (req, res) => {
    const canceled = await tryOns.cancel(req.params.genId!, viewerOf(req));
    res.json(await generationView(canceled, await viewContext(req)));
  });

  router.delete('/try-on/:genId', async (req, res) => {
    await tryOns.erase(req.params.genId!, viewerOf(req));
    res.status(204).end();
  });

  return router;
}

/** The bound of a wait in seconds (0: no wait), from `?wait=` or `Prefer: wait=`. */
function parseWait(req: Request, res: Response, defaultSeconds: number, maxSeconds: number): number {
  const query = req.query.wait;
  if (query !== undefined) {
    if (query === 'true') return defaultSeconds;
    if (query === 'false') return 0;
    const n = typeof query === 'string' && /^\d{1,3}$/.test(query) ? Number(query) : NaN;
    if (!(n >= 1 && n <= maxSeconds))
      throw new ApiError('invalid_request', `wait must be true or a number of seconds from 1 to ${maxSeconds}.`);
    return n;
  }
  res.setHeader('Vary', 'Prefer');
  const prefer = /(?:^|[,;\s])wait\s*=\s*"?(\d+)"?/i.exec(req.get('prefer') ?? '');
  if (!prefer) return 0;
  // RFC 7240: a preference that cannot be honoured as asked is clamped, never an error.
  const seconds = Math.min(Math.max(Number(prefer[1]), 1), maxSeconds);
  res.setHeader('Preference-Applied', `wait=${seconds}`);
  return seconds;
}
