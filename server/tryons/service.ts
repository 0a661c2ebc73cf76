/**
 * The try-on service: submit, find, list, cancel, erase, the result image and the bounded wait, each owning
 * its state change, the runner's cancellation, the waiters' notification and the file clean-up. Routes parse,
 * call one of these and render; they never read or change the state document themselves. Reads are named for
 * what they find (a try-on in the live state or, once cold, in the archive), the seam a second store plugs into.
 */
import { ApiError, validationError } from '../kernel/errors.ts';
import { newId } from '../kernel/ids.ts';
import { noCredits } from '../credits/ledger.ts';
import type { EngineDescription } from '../engines/types.ts';
import { fingerprint } from '../idempotency/idempotency.ts';
import { checkImage, decodeImageField, normalizeImage, type ImageLimits } from '../images/index.ts';
import { readImage, removeGenerationImages, storeImage } from '../images/files.ts';
import { cancelGeneration, getGeneration, isTerminal, markErased } from '../jobs/generations.ts';
import type { TerminalNotifier } from '../jobs/notifier.ts';
import { markErasedAnywhere } from '../jobs/retention.ts';
import type { EngineCatalog, JobRunner, LiveProgress } from '../jobs/runner.ts';
import { findGeneration, type Archive } from '../store/archive.ts';
import type { Store } from '../store/db.ts';
import type { GenerationRecord, GenerationStatus } from '../store/schema.ts';
import type { ImageFormat } from '../kernel/vocabulary.ts';
import type { IdempotencyClaim, StateGateway } from '../state/types.ts';
import type { CheckedSubmission } from './validate.ts';

/**
 * How long a submit may hold its Idempotency-Key on a shared database before another request may take it over
 * (its process is then taken for dead): longer than decoding and re-encoding the largest images allowed.
 */
const IDEMPOTENCY_LEASE_SECONDS = 120;

export interface TryOnServiceOptions {
  store: Store;
  archive: Archive;
  runner: JobRunner;
  engines: EngineCatalog;
  notifier: TerminalNotifier;
  /** The state changes of a try-on's life, on whichever store the appliance runs (lowdb, PostgreSQL). */
  state: StateGateway;
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
    const { store, state, runner, clock, limits } = this.options;
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
      const engine = this.pickEngine(submission.engine);
      if (runner.depth() >= limits.maxQueueDepth)
        throw new ApiError('queue_full', 'The appliance has too many try-ons waiting; try again shortly.', { retryAfterSeconds: 5 });
      if ((await state.account(clock())).creditsRemaining < 1) throw noCredits();
      const { webhookUrl } = submission.params;
      const refused = webhookUrl === undefined ? null : await this.options.webhookDestinationProblem(webhookUrl);
      if (refused) throw validationError([{ field: 'webhookUrl', message: refused }]);
      const normalized = await Promise.all(images.map(({ decoded, probe }) => normalizeImage(decoded, probe, limits.imageLimits)));
      wroteFiles = true;
      const [selfie, ...items] = await Promise.all(
        normalized.map((image, i) => storeImage(store.dataDir, genId, i === 0 ? 'selfie' : `item-${i - 1}`, image)),
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
      runner.enqueue(genId);
      return { status: 202, headers, body: result.body ?? replyBody(result), replayed: false };
    } catch (error) {
      if (wroteFiles) await removeGenerationImages(store.dataDir, genId).catch(() => undefined);
      throw error;
    } finally {
      // A submit that stored its reply freed the key with it; one that failed gives it up.
      if (claim && !submitted) await state.release(claim);
    }
  }

  /** A try-on the viewer may see, from the live state or, once finished, from the archive; 404 otherwise. */
  find(id: string, viewer: Viewer): GenerationRecord {
    const { store, archive } = this.options;
    const record = findGeneration(store.state, archive, id) ?? getGeneration(store.state, id);
    if (!this.keysOf(viewer)(record.keyId)) throw new ApiError('not_found', `There is no try-on ${id}.`);
    return record;
  }

  /** A page of the try-ons the viewer may see, newest first, live and archived together. */
  list(query: ListQuery, viewer: Viewer): { records: GenerationRecord[]; nextCursor: string | null } {
    const { store, archive } = this.options;
    const { status, cursor, limit } = query;
    const sees = this.keysOf(viewer);
    const wanted = (record: Pick<GenerationRecord, 'id' | 'status' | 'keyId'>) =>
      (status === undefined || record.status === status) && (cursor === undefined || record.id < cursor) && sees(record.keyId);
    const newest = (a: GenerationRecord, b: GenerationRecord) => (a.id < b.id ? 1 : -1);
    const count = limit + 1;
    const fromState = Object.values(store.state.generations).filter(wanted).sort(newest).slice(0, count);
    // The archive is walked newest first until enough are found.
    const fromArchive: GenerationRecord[] = [];
    for (const id of archive.ids()) {
      if (fromArchive.length >= count) break;
      if (Object.hasOwn(store.state.generations, id)) continue;
      // Filtered on the summary; only the records on the page are parsed.
      if (wanted({ id, ...archive.summary(id)! })) fromArchive.push(archive.generation(id)!);
    }
    const records = [...fromState, ...fromArchive].sort(newest).slice(0, count);
    const page = records.slice(0, limit);
    return { records: page, nextCursor: records.length > limit ? page[page.length - 1]!.id : null };
  }

  /** The result image of a complete try-on: 409 while it is not complete, 404 once erased. */
  async image(id: string, viewer: Viewer): Promise<{ bytes: Buffer; format: ImageFormat }> {
    const record = this.find(id, viewer);
    if (record.status !== 'complete')
      throw new ApiError('conflict', `The try-on ${record.id} is ${record.status}; its image exists only when it is complete.`);
    if (!record.result) throw new ApiError('not_found', `The image of ${record.id} was erased.`);
    return { bytes: await readImage(this.options.store.dataDir, record.result), format: record.result.format };
  }

  /** Cancels a pending try-on (nothing is charged): written, the engine stopped, waiters told. 409 if it ended. */
  async cancel(id: string, viewer: Viewer): Promise<GenerationRecord> {
    const { store, runner, notifier, clock } = this.options;
    const found = this.find(id, viewer);
    if (isTerminal(found)) throw new ApiError('conflict', `The try-on ${id} is already ${found.status}.`);
    await this.options.state.cancel(id, clock());
    runner.cancel(id);
    notifier.publish(id);
    return this.find(id, viewer);
  }

  /** Erases a try-on's images (canceling it first if pending); the record stays, marked erased. */
  async erase(id: string, viewer: Viewer): Promise<void> {
    const { store, archive, runner, notifier, clock } = this.options;
    if (this.find(id, viewer).erased) return;
    const outcome = await store.mutate((state) => {
      if (!Object.hasOwn(state.generations, id)) return 'moved';
      const wasPending = !isTerminal(state.generations[id]!);
      if (wasPending) cancelGeneration(state, id, clock());
      markErased(state, id, 'all');
      return wasPending ? 'canceled' : 'erased';
    });
    if (outcome === 'canceled') {
      runner.cancel(id);
      notifier.publish(id);
    }
    // A finished try-on may have moved to the archive since it was found.
    if (outcome === 'moved') await markErasedAnywhere(store, archive, id, 'all');
    await removeGenerationImages(store.dataDir, id);
  }

  /**
   * Resolves when the try-on is terminal, `seconds` pass, or `signal` aborts (the client went away). Past the
   * waiter caps (overall, and per key lineage) it resolves at once: the client gets the current status and polls.
   */
  waitForTerminal(id: string, seconds: number, signal: AbortSignal, viewer: Viewer): Promise<void> {
    const { notifier, store, limits } = this.options;
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
      const record = store.state.generations[id];
      if (!record || isTerminal(record) || signal.aborted) finish();
    }).finally(() => {
      this.waiting--;
      const left = (this.waiters.get(viewer.lineageId) ?? 1) - 1;
      if (left > 0) this.waiters.set(viewer.lineageId, left);
      else this.waiters.delete(viewer.lineageId);
    });
  }

  /** Whether the viewer may see a try-on submitted by a key id. */
  private keysOf(viewer: Viewer): (keyId: string) => boolean {
    if (viewer.seesAll) return () => true;
    const own = new Set(this.options.store.state.keys.filter((key) => key.lineageId === viewer.lineageId).map((key) => key.id));
    return (keyId) => own.has(keyId);
  }

  /** How far a running try-on has got (not persisted). */
  live(id: string): LiveProgress {
    return this.options.runner.live(id);
  }

  /** The requested engine, or the best ready one: 422 if it is not installed, 503 if none is ready. */
  private pickEngine(requested: string | undefined): EngineDescription {
    const { engines } = this.options;
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
}
