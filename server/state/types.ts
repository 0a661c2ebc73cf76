/**
 * The state gateway: the appliance's state changes and reads that must hold on any store, each one atomic. Two
 * stores answer it: `LowdbState` (one PC, the default: the features' functions inside one `Store.mutate`) and
 * `PgState` (PostgreSQL, shared by API processes and workers on several machines: one transaction each, with the
 * invariants also held by the database's constraints). `test/unit/state-contract.test.ts` runs one suite against
 * both.
 *
 * Every operation takes the time it happens at, so that tests can move the clock. A refused operation (402, 409,
 * 422) changes nothing.
 */
import type { AccountSummary } from '../credits/ledger.ts';
import type { LedgerPage } from '../credits/history.ts';
import type { UsageQuery, UsageReport } from '../credits/usage.ts';
import type { GenerationErrorCode } from '../kernel/vocabulary.ts';
import type { NewGeneration } from '../jobs/generations.ts';
import type { GenerationRecord, GenerationStatus, IdempotencyRecord, StoredImage, WebhookEvent } from '../store/schema.ts';
import type { Redemption } from '../vouchers/redeem.ts';
import type { VoucherPayload } from '../vouchers/voucher.ts';

/** An Idempotency-Key this process holds while its request executes. */
export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: string;
  /** Names this holder, so that only it can finish or give up the claim. */
  token: string;
}

/** What to do with a request that carries an Idempotency-Key: replay the stored reply, or execute holding the key. */
export type Admission = { kind: 'replay'; record: IdempotencyRecord } | { kind: 'execute'; claim: IdempotencyClaim };

/** The reply stored for an Idempotency-Key, in the same change as the request's side effects. */
export interface ReplyToRemember {
  claim: IdempotencyClaim;
  status: number;
  headers: Record<string, string>;
  /** The body, built from the submit's own result (the balance after its reservation). */
  body: (result: { genId: string; creditsRemaining: number }) => string;
  retentionHours: number;
}

export interface SubmitResult {
  record: GenerationRecord;
  creditsRemaining: number;
  /** The reply body stored with the key, when there was one. */
  body: string | null;
}

/** Which try-ons a page lists: newest first (by id), those with an id below `before`. */
export interface GenerationQuery {
  limit: number;
  status?: GenerationStatus;
  /** The last id of the previous page. */
  before?: string;
  /** Only try-ons submitted by these keys (a standard key's lineage); every try-on when absent. */
  keyIds?: readonly string[];
}

/** A try-on marked erased: the record as it now is, and whether erasing it canceled it (it was pending). */
export interface Erased {
  record: GenerationRecord;
  canceled: boolean;
}

export interface StateGateway {
  /** Grants the installation's trial credits, once ever. */
  grantTrial(credits: number, validDays: number, now: Date): Promise<void>;
  /** Credits remaining, reserved and from the trial, at `now`. */
  account(now: Date): Promise<AccountSummary>;
  /** Records the expiry of trial credits whose time has passed; the credits expired. */
  expireDueCredits(now: Date): Promise<number>;
  /** Up to `limit` ledger entries with a seq below `before` (all when null), newest first. */
  ledgerPage(before: number | null, limit: number): Promise<LedgerPage>;
  /** Try-ons submitted and ended, and credits used, per period of the query (contract 2.8's usage). */
  usage(query: UsageQuery): Promise<UsageReport>;
  /** Credits a verified voucher, once per voucher id (409 `conflict` afterwards). */
  redeemVoucher(voucher: VoucherPayload, keyId: string, now: Date): Promise<Redemption>;

  /**
   * Admits a request with an Idempotency-Key: a stored reply to replay (422 if it was for another request), or a
   * claim to execute under. A key another request is executing under is refused (409 `idempotency_key_in_use`,
   * 422 if that request differs) until its holder finishes, gives up, or (on a shared database) its lease of
   * `leaseSeconds` runs out because its process died.
   */
  admit(scope: string, key: string, fingerprint: string, now: Date, leaseSeconds: number): Promise<Admission>;
  /** Gives up a claim whose request stored nothing (it failed); the key is free again. */
  release(claim: IdempotencyClaim): Promise<void>;

  /**
   * Creates a pending try-on and reserves its credit (402 when none is available), storing the reply for its
   * Idempotency-Key in the same change. A claim that is not held (finished, given up, taken over) is refused and
   * nothing is written.
   */
  submit(input: NewGeneration, now: Date, reply?: ReplyToRemember): Promise<SubmitResult>;
  /** A try-on's record, wherever the store keeps it (on one PC: the state, or the archive once cold). */
  generation(id: string): Promise<GenerationRecord | undefined>;
  /** Up to `limit` try-ons the query names, newest first. */
  generations(query: GenerationQuery): Promise<GenerationRecord[]>;
  /** How many try-ons are pending (queued or running), across every node. */
  pendingCount(): Promise<number>;
  /**
   * Marks a try-on's images erased, canceling it first (its credit released, its webhook event written) if it is
   * pending; again is no change. 404 if unknown. Removing the images themselves is the image store's.
   */
  erase(id: string, now: Date): Promise<Erased>;
  /** Counts an attempt on a pending try-on; false if it is no longer pending. */
  startAttempt(id: string, now: Date): Promise<boolean>;
  /** Completes a pending try-on and captures its credit; false if it is already terminal. */
  complete(id: string, result: StoredImage, now: Date): Promise<boolean>;
  /** Fails a pending try-on and releases its credit; false if it is already terminal. */
  fail(id: string, error: { code: GenerationErrorCode; message: string }, now: Date): Promise<boolean>;
  /** Cancels a pending try-on and releases its credit; 404 if unknown, 409 if already terminal. */
  cancel(id: string, now: Date): Promise<GenerationRecord>;
  /**
   * Sends a finished try-on's webhook event again: pending and due now, a new retry schedule, its attempts kept;
   * 404 if the try-on is unknown, 409 if it is pending or has no event.
   */
  redeliver(genId: string, now: Date): Promise<WebhookEvent>;
  /** The webhook events of one try-on, oldest first. */
  webhookEvents(genId: string): Promise<WebhookEvent[]>;

  close(): Promise<void>;
}
