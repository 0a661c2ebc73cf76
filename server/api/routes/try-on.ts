/**
 * The try-on calls (contract 2.1–2.5): submit, status with bounded wait,
 * image, cancel, erase, list.
 */
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../../kernel/errors.ts';
import { authOf } from '../request-context.ts';
import { checkSubmission } from '../validate-submit.ts';
import { generationView, statusUrl, type ViewContext } from '../views.ts';
import { accountSummary, assertCreditAvailable } from '../../credits/ledger.ts';
import { fingerprint, parseIdempotencyKey, rememberReply, type Admission } from '../../idempotency/idempotency.ts';
import { checkImage, decodeImageField, normalizeImage } from '../../images/index.ts';
import { contentType, readImage, removeGenerationImages, storeImage } from '../../images/files.ts';
import { cancelGeneration, createGeneration, getGeneration, isTerminal, markErased } from '../../jobs/generations.ts';
import { newId } from '../../kernel/ids.ts';
import type { Archive } from '../../store/archive.ts';
import type { GenerationRecord, GenerationStatus } from '../../store/schema.ts';
import type { AppDeps } from '../deps.ts';
import type { EngineDescription } from '../../engines/types.ts';

const STATUSES: GenerationStatus[] = ['pending', 'complete', 'failed', 'canceled'];

/** The base of absolute URLs in replies. */
export function baseUrlOf(req: Request, publicBaseUrl: string | null): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? '127.0.0.1'}`;
}

/** Routes under /api/v1/try-on. */
export function tryOnRoutes(deps: AppDeps): Router {
  const { store, archive, runner, engines, notifier, clock, config } = deps;
  const router = Router();

  /** A generation from the state or, once cold, from the archive; 404 otherwise. */
  const lookup = (id: string): GenerationRecord => {
    if (Object.hasOwn(store.state.generations, id)) return store.state.generations[id]!;
    return archive.generation(id) ?? getGeneration(store.state, id);
  };

  const viewContext = (req: Request): ViewContext => ({
    state: store.state,
    now: clock(),
    baseUrl: baseUrlOf(req, config.publicBaseUrl),
    live: (id) => runner.live(id),
  });

  router.post('/try-on', async (req: Request, res: Response) => {
    const auth = authOf(req);
    const idempotencyKey = parseIdempotencyKey(req.get('idempotency-key'));
    const submission = checkSubmission(req.body);
    const limits = config.imageLimits;
    const images = [submission.selfie, ...submission.items].map((value, i) => {
      const decoded = decodeImageField(value, i === 0 ? 'selfie' : `items[${i - 1}]`, limits);
      return { decoded, probe: checkImage(decoded, limits) };
    });

    let admission: Admission | undefined;
    let print = '';
    if (idempotencyKey) {
      const body = {
        ...(req.body as object),
        selfie: images[0]!.decoded.sha256,
        items: images.slice(1).map((image) => image.decoded.sha256),
      };
      print = fingerprint('POST', '/api/v1/try-on', body);
      admission = deps.idempotency.admit(store.state, auth.key.lineageId, idempotencyKey, print, clock());
      if (admission.kind === 'replay') {
        const { record } = admission;
        res.status(record.status).set(record.headers).set('Idempotent-Replayed', 'true').send(record.body);
        return;
      }
    }
    const genId = newId('gen');
    let wroteFiles = false;
    try {
      // After the idempotency check: a replay answers even if the engine has gone since.
      const engine = pickEngine(engines, submission.engine);
      if (runner.depth() >= config.maxQueueDepth)
        throw new ApiError('queue_full', 'The appliance has too many try-ons waiting; try again shortly.', { retryAfterSeconds: 5 });
      assertCreditAvailable(store.state, clock());
      const normalized = await Promise.all(images.map(({ decoded, probe }) => normalizeImage(decoded, probe, limits)));
      wroteFiles = true;
      const [selfie, ...items] = await Promise.all(
        normalized.map((image, i) => storeImage(store.dataDir, genId, i === 0 ? 'selfie' : `item-${i - 1}`, image)),
      );
      const location = statusUrl(baseUrlOf(req, config.publicBaseUrl), genId);
      const headers = { Location: location, 'Content-Type': 'application/json; charset=utf-8' };
      const body = await store.mutate((state) => {
        const now = clock();
        createGeneration(
          state,
          {
            id: genId,
            keyId: auth.key.id,
            engine: engine.id,
            params: submission.params,
            inputs: { selfie: selfie!, items },
            retentionDays: config.imageRetentionDays,
            statusUrl: location,
          },
          now,
        );
        const text = JSON.stringify({
          genId,
          status: 'pending',
          statusUrl: location,
          creditsRemaining: accountSummary(state, now).creditsRemaining,
        });
        if (idempotencyKey)
          rememberReply(
            state,
            { scope: auth.key.lineageId, key: idempotencyKey, fingerprint: print, status: 202, headers, body: text },
            now,
            config.idempotencyRetentionHours,
          );
        return text;
      });
      runner.enqueue(genId);
      res.status(202).set(headers).send(body);
    } catch (error) {
      if (wroteFiles) await removeGenerationImages(store.dataDir, genId).catch(() => undefined);
      throw error;
    } finally {
      if (admission?.kind === 'execute') admission.done();
    }
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
    const wanted = (record: GenerationRecord) =>
      (status === undefined || record.status === status) && (cursor === undefined || record.id < cursor);
    const records = newestFirst(
      Object.values(store.state.generations).filter(wanted),
      archive,
      (record) => !Object.hasOwn(store.state.generations, record.id) && wanted(record),
      limit + 1,
    );
    const page = records.slice(0, limit);
    const context = viewContext(req);
    res.json({
      data: await Promise.all(page.map((record) => generationView(record, context))),
      nextCursor: records.length > limit ? page[page.length - 1]!.id : null,
    });
  });

  router.get('/try-on/:genId', async (req, res) => {
    const id = req.params.genId!;
    const waitSeconds = parseWait(req, res, config.waitDefaultSeconds, config.waitMaxSeconds);
    lookup(id);
    if (waitSeconds > 0) await waitForTerminal(deps, id, waitSeconds, res);
    const record = lookup(id);
    if (record.status === 'pending') res.setHeader('Retry-After', '1');
    res.json(await generationView(record, viewContext(req), store.dataDir));
  });

  router.get('/try-on/:genId/image', async (req, res) => {
    const record = lookup(req.params.genId!);
    if (record.status !== 'complete')
      throw new ApiError('conflict', `The try-on ${record.id} is ${record.status}; its image exists only when it is complete.`);
    if (!record.result) throw new ApiError('not_found', `The image of ${record.id} was erased.`);
    const bytes = await readImage(store.dataDir, record.result);
    res.status(200).type(contentType(record.result.format)).setHeader('Cache-Control', 'private, no-store');
    res.send(bytes);
  });

  router.post('/try-on/:genId/cancel', async (req, res) => {
    const id = req.params.genId!;
    const found = lookup(id);
    if (isTerminal(found)) throw new ApiError('conflict', `The try-on ${id} is already ${found.status}.`);
    await store.mutate((state) => cancelGeneration(state, id, clock()));
    runner.cancel(id);
    notifier.publish(id);
    res.json(await generationView(lookup(id), viewContext(req)));
  });

  router.delete('/try-on/:genId', async (req, res) => {
    const id = req.params.genId!;
    if (lookup(id).erased && !Object.hasOwn(store.state.generations, id)) {
      res.status(204).end(); // archived: erased long ago
      return;
    }
    const canceled = await store.mutate((state) => {
      const record = getGeneration(state, id);
      const wasPending = !isTerminal(record);
      if (wasPending) cancelGeneration(state, id, clock());
      markErased(state, id, 'all');
      return wasPending;
    });
    if (canceled) {
      runner.cancel(id);
      notifier.publish(id);
    }
    await removeGenerationImages(store.dataDir, id);
    res.status(204).end();
  });

  return router;
}

/**
 * Up to `count` records, newest first: the state's (already filtered) merged
 * with the archive's, which are walked newest first until enough are found.
 */
function newestFirst(
  current: GenerationRecord[],
  archive: Archive,
  wantedArchived: (record: GenerationRecord) => boolean,
  count: number,
): GenerationRecord[] {
  const fromState = current.sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, count);
  const fromArchive: GenerationRecord[] = [];
  for (const id of archive.ids()) {
    if (fromArchive.length >= count) break;
    const record = archive.generation(id)!;
    if (wantedArchived(record)) fromArchive.push(record);
  }
  return [...fromState, ...fromArchive].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, count);
}

/** The requested engine, or the best ready one: 422 if it is not installed, 503 if none is ready. */
function pickEngine(engines: AppDeps['engines'], requested: string | undefined): EngineDescription {
  const engine = requested ? engines.get(requested) : engines.defaultEngine();
  if (requested && !engine) {
    throw new ApiError('validation_failed', `engine: "${requested}" is not installed`, {
      errors: [{ field: 'engine', message: 'is not an installed engine (see GET /api/v1/engines)' }],
    });
  }
  if (!engine || !engine.ready) {
    throw new ApiError(
      'engine_unavailable',
      engine
        ? `The engine "${engine.id}" is not ready: ${engine.reason ?? 'it is still loading'}.`
        : 'No try-on engine is installed and ready on this appliance; see GET /api/v1/engines.',
    );
  }
  return engine;
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

/** Resolves when the generation is terminal, the bound passes, or the client goes away. */
function waitForTerminal(deps: AppDeps, id: string, seconds: number, res: Response): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      unsubscribe();
      clearTimeout(timer);
      res.off('close', finish);
      resolve();
    };
    const unsubscribe = deps.notifier.subscribe(id, finish);
    const timer = setTimeout(finish, seconds * 1000);
    res.on('close', finish);
    const record = deps.store.state.generations[id];
    if (!record || isTerminal(record)) finish();
  });
}
