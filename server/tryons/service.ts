/**
 * The try-on service: submit, find, list, cancel, erase, the result image and the bounded wait, each owning
 * its state change, the jobs' cancellation, the waiters' notification and the images' clean-up. Routes parse,
 * call one of these and render. It holds no store of its own: state through the gateway, keys through the account
 * store, images through the image store, so that it is the same on one PC and on a shared database.
 */
import { ApiError, validationError } from '../kernel/errors.ts';
import { newId } from '../kernel/ids.ts';
import { noCredits } from '../credits/ledger.ts';
import type { EngineDescription } from '../engines/types.ts';
import { fingerprint } from '../idempotency/idempotency.ts';
import { checkImage, decodeImageField, normalizeImage, type ImageLimits } from '../images/index.ts';
import { isTerminal } from '../jobs/generations.ts';
import type { TerminalNotifier } from '../jobs/notifier.ts';
import type { EngineCatalog, LiveProgress } from '../jobs/runner.ts';
import type { GenerationRecord, GenerationStatus } from '../store/schema.ts';
import type { ImageFormat } from '../kernel/vocabulary.ts';
import type { AccountStore } from '../state/accounts.ts';
import { ImageNotFoundError, type ImageStore } from '../state/images.ts';
import type { IdempotencyClaim, StateGateway } from '../state/types.ts';
import type { CheckedSubmission } from './validate.ts';

/**
 * How long a submit may hold its Idempotency-Key on a shared database before another request may take it over
 * (its process is then taken for dead): longer than decoding and re-encoding the largest images allowed.
 */
const IDEMPOTENCY_LEASE_SECONDS = 120;

/**
 * What runs try-ons, as the service sees it: the job runner on one PC, or on a shared database the queue that
 * workers claim from (enqueueing is then the database's; canceling stops the try-on if it runs here).
 */
export interface TryOnJobs {
  enqueue(id: string): void;
  cancel(id: string): void;
  /** Try-ons queued or running. */
  depth(): number | Promise<number>;
  /** Stage and progress of a pending try-on (not persisted). */
  live(id: string): LiveProgress;
}

export interface TryOnServiceOptions {
  jobs: TryOnJobs;
  engines: EngineCatalog;
  notifier: TerminalNotifier;
  /** The state changes of a try-on's life, on whichever store the appliance runs (lowdb, PostgreSQL). */
  state: StateGateway;
  /** Whose try-ons a standard key sees: its lineage's keys. */
  accounts: AccountStore;
  images: ImageStore;
  /** Why a webhook URL would be refused at delivery, or null: checked before any credit is reserved. */
  webhookDestinationProblem: (url: string) => Promise<string | null>;
  clock: () => Date;
  limits: {
    imageLimits: ImageLimits;
    maxQueueDepth: number;
    /** Bounded waits held at once, overall and per key lineage; beyond them a wait ends at once. */
    maxWaiters: number;
    maxWaitersPerKey: number;
    imageRetentionDays: number;
    idempotencyRetentionHours: number;
  };
}

/** A submission as the HTTP layer hands it over: checked fields, the caller, the idempotency key, URLs. */
export interface SubmitInput {
  submission: CheckedSubmission;
  /** The request body as sent (its images are fingerprinted by their sha256, not their base64). */
  body: object;
  keyId: string;
  /** Idempotency records are scoped to the key's lineage (a rotated key keeps them). */
  lineageId: string;
  idempotencyKey: string | undefined;
  /** The absolute status URL of a try-on id. */
  statusUrl: (genId: string) => string;
}

/** The reply to a submit: a new 202, or the stored reply replayed for the same Idempotency-Key. */
export interface SubmitReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  replayed: boolean;
}

/**
 * Who asks: an admin key sees every try-on; a standard key sees those submitted by its own lineage (itself and
 * the keys it was rotated from), and any other try-on is 404 to it, as if it did not exist.
 */
export interface Viewer {
  lineageId: string;
  seesAll: boolean;
}

export interface ListQuery {
  status?: GenerationStatus;
  limit: number;
  /** The last id of the previous page. */
  cursor?: string;
}

export class TryOnService {
  /** Bounded waits held now, overall and per key lineage. */
  private waiting = 0;
  private readonly waiters = new Map<string, number>();

  constructor(private readonly options: TryOnServiceOptions) {}

  /** Submits a try-on: images checked, credit and queue checked, files stored, the record written, then queued. */
  async submit(input: SubmitInput): Promise<SubmitReply> {
    const { images: imageStore, state, jobs, clock, limits } = this.options;
    const { submission, idempotencyKey } = input;
    const images = [submission.selfie, ...submission.items].map((value, i) => {
      const decoded = decodeImageField(value, i === 0 ? 'selfie' : `items[${i - 1}]`, limits.imageLimits);
      return { decoded, probe: checkImage(decoded, limits.imageLimits) };
    });

    let claim: IdempotencyClaim | undefined;
    if (idempotencyKey) {
      const body = {
        ...input.body,
        selfie: images[0]!.decoded.sha256,
        items: images.slice(1).map((image) => image.decoded.sha256),
      };
      const print = fingerprint('POST', '/api/v1/try-on', body);
      const admission = await state.admit(input.lineageId, idempotencyKey, print, clock(), IDEMPOTENCY_LEASE_SECONDS);
      if (admission.kind === 'replay') {
        const { record } = admission;
        return { status: record.status, headers: record.headers, body: record.body, replayed: true };
      }
      claim = admission.claim;
    }
    const genId = newId('gen');
    let wroteFiles = false;
    let submitted = false;
    try {
      // After the idempotency check: a replay answers even if the engine has gone since.
      const engine = await this.pickEngine(submission.engine);
      if ((await jobs.depth()) >= limits.maxQueueDepth)
        throw new ApiError('queue_full', 'The appliance has too many try-ons waiting; try again shortly.', { retryAfterSeconds: 5 });
      if ((await state.account(clock())).creditsRemaining < 1) throw noCredits();
      const { webhookUrl } = submission.params;
      const refused = webhookUrl === undefined ? null : await this.options.webhookDestinationProblem(webhookUrl);
      if (refused) throw validationError([{ field: 'webhookUrl', message: refused }]);
      const normalized = await Promise.all(images.map(({ decoded, probe }) => normalizeImage(decoded, probe, limits.imageLimits)));
      wroteFiles = true;
      const [selfie, ...items] = await Promise.all(
        normalized.map(({ bytes, ...meta }, i) => imageStore.put(genId, i === 0 ? 'selfie' : `item-${i - 1}`, bytes, meta)),
      );
      const location = input.statusUrl(genId);
      const headers = { Location: location, 'Content-Type': 'application/json; charset=utf-8' };
      const replyBody = ({ creditsRemaining }: { creditsRemaining: number }) =>
        JSON.stringify({ genId, status: 'pending', statusUrl: location, creditsRemaining });
      const result = await state.submit(
        {
          id: genId,
          keyId: input.keyId,
          engine: engine.id,
          params: submission.params,
          inputs: { selfie: selfie!, items },
          retentionDays: limits.imageRetentionDays,
          statusUrl: location,
        },
        clock(),
        claim && { claim, status: 202, headers, body: replyBody, retentionHours: limits.idempotencyRetentionHours },
      );
      submitted = true;
      jobs.enqueue(genId);
      return { status: 202, headers, body: result.body ?? replyBody(result), replayed: false };
    } catch (error) {
      if (wroteFiles) await imageStore.removeGeneration(genId).catch(() => undefined);
      throw error;
    } finally {
      // A submit that stored its reply freed the key with it; one that failed gives it up.
      if (claim && !submitted) await state.release(claim);
    }
  }

  /** A try-on the viewer may see, wherever the store keeps it; 404 otherwise. */
  async find(id: string, viewer: Viewer): Promise<GenerationRecord> {
    const record = await this.options.state.generation(id);
    if (!record || !(viewer.seesAll || (await this.options.accounts.key(record.keyId))?.lineageId === viewer.lineageId))
      throw new ApiError('not_found', `There is no try-on ${id}.`);
    return record;
  }

  /** A page of the try-ons the viewer may see, newest first. */
  async list(query: ListQuery, viewer: Viewer): Promise<{ records: GenerationRecord[]; nextCursor: string | null }> {
    const { state, accounts } = this.options;
    const keyIds = viewer.seesAll
      ? undefined
      : (await accounts.keys()).filter((key) => key.lineageId === viewer.lineageId).map((key) => key.id);
    const records = await state.generations({
      limit: query.limit + 1,
      ...(query.status === undefined ? {} : { status: query.status }),
      ...(query.cursor === undefined ? {} : { before: query.cursor }),
      ...(keyIds === undefined ? {} : { keyIds }),
    });
    const page = records.slice(0, query.limit);
    return { records: page, nextCursor: records.length > query.limit ? page[page.length - 1]!.id : null };
  }

  /** The result image of a complete try-on: 409 while it is not complete, 404 once erased. */
  async image(id: string, viewer: Viewer): Promise<{ bytes: Buffer; format: ImageFormat }> {
    const record = await this.find(id, viewer);
    if (record.status !== 'complete')
      throw new ApiError('conflict', `The try-on ${record.id} is ${record.status}; its image exists only when it is complete.`);
    const erased = () => new ApiError('not_found', `The image of ${record.id} was erased.`);
    if (!record.result) throw erased();
    try {
      return { bytes: await this.options.images.get(record.result), format: record.result.format };
    } catch (error) {
      // Erased between reading the record and reading the image.
      if (error instanceof ImageNotFoundError) throw erased();
      throw error;
    }
  }

  /** Cancels a pending try-on (nothing is charged): written, the engine stopped, waiters told. 409 if it ended. */
  async cancel(id: string, viewer: Viewer): Promise<GenerationRecord> {
    const { jobs, notifier, clock } = this.options;
    const found = await this.find(id, viewer);
    if (isTerminal(found)) throw new ApiError('conflict', `The try-on ${id} is already ${found.status}.`);
    const canceled = await this.options.state.cancel(id, clock());
    jobs.cancel(id);
    notifier.publish(id);
    return canceled;
  }

  /** Erases a try-on's images (canceling it first if pending); the record stays, marked erased. */
  async erase(id: string, viewer: Viewer): Promise<void> {
    const { state, images, jobs, notifier, clock } = this.options;
    if ((await this.find(id, viewer)).erased) return;
    const { canceled } = await state.erase(id, clock());
    if (canceled) {
      jobs.cancel(id);
      notifier.publish(id);
    }
    await images.removeGeneration(id);
  }

  /**
   * Resolves when the try-on is terminal, `seconds` pass, or `signal` aborts (the client went away). Past the
   * waiter caps (overall, and per key lineage) it resolves at once: the client gets the current status and polls.
   */
  waitForTerminal(id: string, seconds: number, signal: AbortSignal, viewer: Viewer): Promise<void> {
    const { notifier, state, limits } = this.options;
    const mine = this.waiters.get(viewer.lineageId) ?? 0;
    if (this.waiting >= limits.maxWaiters || mine >= limits.maxWaitersPerKey) return Promise.resolve();
    this.waiting++;
    this.waiters.set(viewer.lineageId, mine + 1);
    return new Promise<void>((resolve) => {
      const finish = () => {
        unsubscribe();
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const unsubscribe = notifier.subscribe(id, finish);
      const timer = setTimeout(finish, seconds * 1000);
      signal.addEventListener('abort', finish);
      if (signal.aborted) return finish();
      // Subscribed first, then read: a settle in between is either seen here or heard.
      state.generation(id).then(
        (record) => (!record || isTerminal(record) ? finish() : undefined),
        () => finish(),
      );
    }).finally(() => {
      this.waiting--;
      const left = (this.waiters.get(viewer.lineageId) ?? 1) - 1;
      if (left > 0) this.waiters.set(viewer.lineageId, left);
      else this.waiters.delete(viewer.lineageId);
    });
  }

  /** How far a running try-on has got (not persisted). */
  live(id: string): LiveProgress {
    return this.options.jobs.live(id);
  }

  /** The requested engine, or the best ready one: 422 if it is not installed, 503 if none is ready. */
  private async pickEngine(requested: string | undefined): Promise<EngineDescription> {
    const { engines } = this.options;
    const choose = () => (requested ? engines.get(requested) : engines.defaultEngine());
    let engine = choose();
    if ((!engine || !engine.ready) && engines.refresh) {
      // The fleet's last reading may predate a worker that joined since.
      await engines.refresh();
      engine = choose();
    }
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
}
