/**
 * Intent-named changes to generation records. Each runs inside
 * `Store.mutate`, keeps the ledger in step (reserve on create, capture on
 * complete, release on fail and cancel) and checks before it changes.
 */
import { ApiError } from '../kernel/errors.ts';
import { captureCredit, releaseCredit, reserveCredit } from '../credits/ledger.ts';
import type { GenerationErrorCode } from '../engines/types.ts';
import type { GenerationParams, GenerationRecord, State, StoredImage } from '../store/schema.ts';
import { addTerminalEvent } from '../webhooks/outbox.ts';

export interface NewGeneration {
  id: string;
  keyId: string;
  engine: string;
  params: GenerationParams;
  inputs: { selfie: StoredImage; items: StoredImage[] };
  retentionDays: number;
  /** The absolute status URL, kept for the webhook body when there is a webhookUrl. */
  statusUrl?: string;
}

/** Creates a pending generation and reserves its credit (402 if none is available). */
export function createGeneration(state: State, input: NewGeneration, now: Date): GenerationRecord {
  if (state.generations[input.id]) throw new Error(`generation ${input.id} exists`);
  reserveCredit(state, input.id, now);
  const record = newGenerationRecord(input, now);
  state.generations[input.id] = record;
  return record;
}

/** The record of a new pending try-on whose credit is reserved (any store writes it with the reservation). */
export function newGenerationRecord(input: NewGeneration, now: Date): GenerationRecord {
  const record: GenerationRecord = {
    id: input.id,
    keyId: input.keyId,
    engine: input.engine,
    status: 'pending',
    stage: 'queued',
    params: input.params,
    inputs: input.inputs,
    result: null,
    attempts: 0,
    credit: 'reserved',
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + input.retentionDays * 86_400_000).toISOString(),
    erased: false,
  };
  if (input.statusUrl && input.params.webhookUrl) record.statusUrl = input.statusUrl;
  return record;
}

/** The generation, or a 404 problem. */
export function getGeneration(state: State, id: string): GenerationRecord {
  const record = Object.hasOwn(state.generations, id) ? state.generations[id] : undefined;
  if (!record) throw new ApiError('not_found', `There is no try-on ${id}.`);
  return record;
}

/** Marks a pending generation as running and counts the attempt; false if it is no longer pending. */
export function startAttempt(state: State, id: string, now: Date): boolean {
  const record = state.generations[id];
  if (!record || record.status !== 'pending') return false;
  record.stage = 'running';
  record.attempts += 1;
  record.startedAt = now.toISOString();
  return true;
}

/** Puts a running generation back in the queue (after a retryable failure or a shutdown). */
export function requeue(state: State, id: string, options: { refundAttempt: boolean }): boolean {
  const record = state.generations[id];
  if (!record || record.status !== 'pending') return false;
  record.stage = 'queued';
  if (options.refundAttempt) record.attempts = Math.max(0, record.attempts - 1);
  return true;
}

/** Completes a pending generation with its result and captures the credit; false if it was canceled meanwhile. */
export function completeGeneration(state: State, id: string, result: StoredImage, now: Date): boolean {
  const record = state.generations[id];
  if (!record || record.status !== 'pending') return false;
  record.result = result;
  settle(state, record, 'complete', now);
  return true;
}

/** Fails a pending generation and releases the credit; false if it is already terminal. */
export function failGeneration(state: State, id: string, error: { code: GenerationErrorCode; message: string }, now: Date): boolean {
  const record = state.generations[id];
  if (!record || record.status !== 'pending') return false;
  record.error = error;
  settle(state, record, 'failed', now);
  return true;
}

/** Cancels a pending generation and releases the credit; 409 if it is already terminal. */
export function cancelGeneration(state: State, id: string, now: Date): GenerationRecord {
  const record = getGeneration(state, id);
  if (record.status !== 'pending') throw new ApiError('conflict', `The try-on ${id} is already ${record.status}.`);
  settle(state, record, 'canceled', now);
  return record;
}

/**
 * The one way a generation becomes terminal: its credit is captured (complete)
 * or released, and its webhook event joins the outbox, all in the caller's mutation.
 */
function settle(state: State, record: GenerationRecord, status: Exclude<GenerationRecord['status'], 'pending'>, now: Date): void {
  if (status === 'complete') captureCredit(state, record.id, now);
  else releaseCredit(state, record.id, now);
  markSettled(record, status, now);
  addTerminalEvent(state, record, now);
}

/** A pending record made terminal: its status, its credit's fate and when (the ledger entry is the store's). */
export function markSettled(record: GenerationRecord, status: Exclude<GenerationRecord['status'], 'pending'>, now: Date): void {
  record.status = status;
  record.credit = status === 'complete' ? 'captured' : 'released';
  record.completedAt = now.toISOString();
}

/** Forgets a generation's images (the files are removed by the caller); the record stays. */
export function markErased(state: State, id: string, what: 'all' | 'inputs'): void {
  const record = state.generations[id];
  if (record) eraseRecord(record, what);
}

/** Marks one record's inputs, or all its images, erased (the record itself, wherever it is kept). */
export function eraseRecord(record: GenerationRecord, what: 'all' | 'inputs'): void {
  record.inputs = null;
  if (what === 'all') {
    record.result = null;
    record.erased = true;
  }
}

/** Whether a generation has reached a state that never changes. */
export function isTerminal(record: GenerationRecord): boolean {
  return record.status !== 'pending';
}
