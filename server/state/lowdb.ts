/**
 * The state gateway on one PC: each operation is one `Store.mutate` over the features' own functions, so it is
 * exactly what the appliance does without a database. Idempotency keys in flight are held in this process's
 * memory (a request that dies with the process committed nothing), so a lease never has to run out.
 */
import { randomUUID } from 'node:crypto';
import { allGenerations, allLedgerEntries, ledgerPage } from '../credits/history.ts';
import { usageReport, type UsageQuery } from '../credits/usage.ts';
import { accountSummary, expireDueCredits, grantTrial } from '../credits/ledger.ts';
import { ApiError } from '../kernel/errors.ts';
import { claimLost, IdempotencyGuard, rememberReply } from '../idempotency/idempotency.ts';
import {
  cancelGeneration,
  completeGeneration,
  createGeneration,
  failGeneration,
  isTerminal,
  markErased,
  startAttempt,
} from '../jobs/generations.ts';
import { markErasedAnywhere } from '../jobs/retention.ts';
import type { Archive } from '../store/archive.ts';
import type { Store } from '../store/db.ts';
import { redeemVoucher } from '../vouchers/redeem.ts';
import { eventsOf, redeliverEvent } from '../webhooks/outbox.ts';
import type { GenerationRecord } from '../store/schema.ts';
import type { Admission, Erased, GenerationQuery, IdempotencyClaim, StateGateway } from './types.ts';

export class LowdbState implements StateGateway {
  private readonly guard = new IdempotencyGuard();
  /** The claims this process holds, by scope and key, with what frees them in the guard. */
  private readonly held = new Map<string, { token: string; done: () => void }>();

  constructor(
    private readonly store: Store,
    private readonly archive: Archive,
  ) {}

  async grantTrial(credits: number, validDays: number, now: Date): Promise<void> {
    await this.store.mutate((state) => grantTrial(state, now, credits, validDays));
  }

  async account(now: Date) {
    return accountSummary(this.store.state, now);
  }

  expireDueCredits(now: Date): Promise<number> {
    return this.store.mutate((state) => expireDueCredits(state, now));
  }

  async ledgerPage(before: number | null, limit: number) {
    return ledgerPage(this.store.state, this.archive, before, limit);
  }

  async usage(query: UsageQuery) {
    const state = this.store.state;
    return usageReport(query, allGenerations(state, this.archive), allLedgerEntries(state, this.archive));
  }

  redeemVoucher(...args: Parameters<StateGateway['redeemVoucher']>) {
    const [voucher, keyId, now] = args;
    return this.store.mutate((state) => redeemVoucher(state, voucher, keyId, now));
  }

  async admit(scope: string, key: string, fingerprint: string, now: Date): Promise<Admission> {
    const admission = this.guard.admit(this.store.state, scope, key, fingerprint, now);
    if (admission.kind === 'replay') return admission;
    const claim: IdempotencyClaim = { scope, key, fingerprint, token: randomUUID() };
    this.held.set(heldKey(claim), { token: claim.token, done: admission.done });
    return { kind: 'execute', claim };
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    const held = this.held.get(heldKey(claim));
    if (held?.token !== claim.token) return;
    this.held.delete(heldKey(claim));
    held.done();
  }

  async submit(...args: Parameters<StateGateway['submit']>) {
    const [input, now, reply] = args;
    if (reply && this.held.get(heldKey(reply.claim))?.token !== reply.claim.token) throw claimLost();
    const result = await this.store.mutate((state) => {
      const record = createGeneration(state, input, now);
      const creditsRemaining = accountSummary(state, now).creditsRemaining;
      let body: string | null = null;
      if (reply) {
        const { claim } = reply;
        body = reply.body({ genId: record.id, creditsRemaining });
        const entry = {
          scope: claim.scope,
          key: claim.key,
          fingerprint: claim.fingerprint,
          status: reply.status,
          headers: reply.headers,
          body,
        };
        rememberReply(state, entry, now, reply.retentionHours);
      }
      return { id: record.id, creditsRemaining, body };
    });
    if (reply) await this.release(reply.claim);
    return { record: this.store.state.generations[result.id]!, creditsRemaining: result.creditsRemaining, body: result.body };
  }

  async generation(id: string) {
    return Object.hasOwn(this.store.state.generations, id) ? this.store.state.generations[id] : this.archive.generation(id);
  }

  async generations(query: GenerationQuery): Promise<GenerationRecord[]> {
    const { store, archive } = this;
    const { status, before, limit } = query;
    const keyIds = query.keyIds && new Set(query.keyIds);
    const wanted = (record: Pick<GenerationRecord, 'id' | 'status' | 'keyId'>) =>
      (status === undefined || record.status === status) &&
      (before === undefined || record.id < before) &&
      (keyIds === undefined || keyIds.has(record.keyId));
    const newest = (a: GenerationRecord, b: GenerationRecord) => (a.id < b.id ? 1 : -1);
    const live = store.state.generations;
    const fromState = Object.values(live).filter(wanted).sort(newest).slice(0, limit);
    // The archive is walked newest first until enough are found; only the records on the page are parsed.
    const fromArchive: GenerationRecord[] = [];
    for (const id of archive.ids()) {
      if (fromArchive.length >= limit) break;
      if (!Object.hasOwn(live, id) && wanted({ id, ...archive.summary(id)! })) fromArchive.push(archive.generation(id)!);
    }
    return [...fromState, ...fromArchive].sort(newest).slice(0, limit);
  }

  async pendingCount(): Promise<number> {
    // The archive holds finished try-ons only.
    return Object.values(this.store.state.generations).filter((record) => !isTerminal(record)).length;
  }

  async erase(id: string, now: Date): Promise<Erased> {
    const canceled = await this.store.mutate((state) => {
      const record = state.generations[id];
      if (!record) return undefined;
      const pending = !isTerminal(record);
      if (pending) cancelGeneration(state, id, now);
      markErased(state, id, 'all');
      return pending;
    });
    // A finished try-on may be in the archive (or have moved there since it was looked up).
    if (canceled === undefined && !(await markErasedAnywhere(this.store, this.archive, id, 'all')))
      throw new ApiError('not_found', `There is no try-on ${id}.`);
    return { record: (await this.generation(id))!, canceled: canceled === true };
  }

  startAttempt(id: string, now: Date): Promise<boolean> {
    return this.store.mutate((state) => startAttempt(state, id, now));
  }

  complete(...args: Parameters<StateGateway['complete']>) {
    const [id, result, now] = args;
    return this.store.mutate((state) => completeGeneration(state, id, result, now));
  }

  fail(...args: Parameters<StateGateway['fail']>) {
    const [id, error, now] = args;
    return this.store.mutate((state) => failGeneration(state, id, error, now));
  }

  async cancel(id: string, now: Date) {
    await this.store.mutate((state) => cancelGeneration(state, id, now));
    return this.store.state.generations[id]!;
  }

  redeliver(genId: string, now: Date) {
    // A finished try-on may be in the archive; its event stays in the state until pruned.
    const found = this.archive.generation(genId);
    return this.store.mutate((state) => {
      const record = Object.hasOwn(state.generations, genId) ? state.generations[genId] : found;
      if (!record) throw new ApiError('not_found', `There is no try-on ${genId}.`);
      return structuredClone(redeliverEvent(state, record, now));
    });
  }

  async webhookEvents(genId: string) {
    const record = await this.generation(genId);
    return record ? eventsOf(this.store.state, record) : [];
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function heldKey(claim: IdempotencyClaim): string {
  return `${claim.scope}\n${claim.key}`;
}
