/**
 * The account store on one PC: each change is one `Store.mutate` over the features' own functions (keys/,
 * webhooks/secrets.ts), each read a look at the committed `store.state`. The GUI's records follow the rules in
 * accounts.ts, as PgAccounts does. Returned records are copies.
 */
import { createKey, hashKey, isKeyActive, revokeKey, rotateKey } from '../keys/api-keys.ts';
import { newId } from '../kernel/ids.ts';
import type { Store } from '../store/db.ts';
import type { ApiKeyRecord, CatalogueGarment, State } from '../store/schema.ts';
import { currentSecret, ensureSecret, rotateSecret, secretView, signingSecrets } from '../webhooks/secrets.ts';
import {
  FIRST_KEY_NAME,
  GUI_KEY_NAME,
  alreadyRotated,
  checkChangedGarment,
  checkCodesUnique,
  checkSessionKey,
  checkSessionTimes,
  garmentIdTaken,
  garmentNotFound,
  guiKeyUsable,
  keyAlreadyStored,
  newCodes,
  sessionTokenInUse,
  withoutEmptyCodes,
  type AccountStore,
  type LiveSession,
  type NewSession,
  type PinThrottleState,
  type ShareLink,
  type ShopFloor,
  type ShopFloorChoices,
} from './accounts.ts';

const copy = structuredClone;

export class LowdbAccounts implements AccountStore {
  constructor(private readonly store: Store) {}

  private get state(): State {
    return this.store.state;
  }

  async installation() {
    return this.state.installation && copy(this.state.installation);
  }

  install(now: Date, firstAdminKey: string) {
    return this.store.mutate((state) => {
      if (state.installation) return { installation: copy(state.installation), created: false };
      if (state.keys.some((key) => key.hash === hashKey(firstAdminKey))) throw keyAlreadyStored();
      state.installation = { id: newId('inst', now.getTime()), createdAt: now.toISOString() };
      createKey(state, FIRST_KEY_NAME, 'admin', now, { key: firstAdminKey });
      return { installation: copy(state.installation), created: true };
    });
  }

  createKey(...[name, scope, now, options = {}]: Parameters<AccountStore['createKey']>) {
    return this.store.mutate((state) => {
      if (options.key !== undefined && state.keys.some((key) => key.hash === hashKey(options.key!))) throw keyAlreadyStored();
      return copy(createKey(state, name, scope, now, options.key === undefined ? {} : { key: options.key }));
    });
  }

  async keys() {
    return copy(this.state.keys);
  }

  async key(id: string) {
    const record = this.state.keys.find((candidate) => candidate.id === id);
    return record && copy(record);
  }

  async activeKeyByHash(hash: string, now: Date) {
    const record = this.state.keys.find((candidate) => candidate.hash === hash);
    return record && isKeyActive(record, now) ? copy(record) : undefined;
  }

  revokeKey(id: string, now: Date) {
    return this.store.mutate((state) => copy(revokeKey(state, id, now)));
  }

  rotateKey(id: string, now: Date, graceSeconds: number) {
    return this.store.mutate((state) => {
      const previous = state.keys.find((candidate) => candidate.id === id);
      // rotateKey itself lets a key in its grace be rotated again; a key has one successor here.
      if (previous?.rotatedTo !== undefined) throw alreadyRotated(previous);
      return copy(rotateKey(state, id, now, graceSeconds));
    });
  }

  async webhookSecret(now: Date) {
    const current = currentSecret(this.state);
    return copy(current ?? (await this.store.mutate((state) => ensureSecret(state, now))));
  }

  async webhookSecretView(now: Date) {
    const current = await this.webhookSecret(now);
    return secretView(current, this.state, now);
  }

  async signingSecrets(now: Date) {
    return signingSecrets(this.state, now);
  }

  rotateWebhookSecret(now: Date, overlapHours: number) {
    return this.store.mutate((state) => copy(secretView(rotateSecret(state, now, overlapHours), state, now)));
  }

  async shopFloor(): Promise<ShopFloor> {
    const { gui } = this.state;
    return {
      pinHash: gui.pinHash,
      guiKeyId: gui.keyId,
      eraseOnNewCustomer: gui.eraseOnNewCustomer === true,
      autoCapture: gui.autoCapture === true,
      pinThrottle: gui.pinThrottle ? copy(gui.pinThrottle) : null,
    };
  }

  async setPin(hash: string) {
    await this.store.mutate((state) => {
      state.gui.pinHash = hash;
    });
  }

  async setChoices(choices: ShopFloorChoices) {
    await this.store.mutate((state) => {
      if (choices.eraseOnNewCustomer !== undefined) state.gui.eraseOnNewCustomer = choices.eraseOnNewCustomer;
      if (choices.autoCapture !== undefined) state.gui.autoCapture = choices.autoCapture;
    });
  }

  pinFailed(now: Date, waitMs: (failures: number) => number): Promise<PinThrottleState> {
    return this.store.mutate((state) => {
      const failures = (state.gui.pinThrottle?.failures ?? 0) + 1;
      const wait = waitMs(failures);
      state.gui.pinThrottle = { failures, blockedUntil: wait > 0 ? new Date(now.getTime() + wait).toISOString() : null };
      return copy(state.gui.pinThrottle);
    });
  }

  async pinSucceeded() {
    if (this.state.gui.pinThrottle === undefined) return;
    await this.store.mutate((state) => void delete state.gui.pinThrottle);
  }

  startSession(input: NewSession, now: Date): Promise<LiveSession> {
    return this.store.mutate((state) => {
      checkSessionTimes(input.expiresAt, now);
      const sessions = state.gui.sessions;
      if (Object.values(sessions).some((session) => session.hash === input.hash)) throw sessionTokenInUse();
      const key = input.keyId === null ? ensureGuiKey(state, now) : checkSessionKey(findKey(state, input.keyId), now);
      for (const [id, session] of Object.entries(sessions)) if (now.getTime() >= Date.parse(session.expiresAt)) delete sessions[id];
      const id = newId('ses', now.getTime());
      sessions[id] = {
        id,
        hash: input.hash,
        keyId: key.id,
        via: input.via,
        createdAt: now.toISOString(),
        expiresAt: input.expiresAt.toISOString(),
      };
      if (input.newPinHash !== undefined) state.gui.pinHash = input.newPinHash;
      return { session: copy(sessions[id]), key: copy(key) };
    });
  }

  async liveSession(hash: string, now: Date) {
    const state = this.state;
    const session = Object.values(state.gui.sessions).find((candidate) => candidate.hash === hash);
    if (!session || now.getTime() >= Date.parse(session.expiresAt)) return undefined;
    const key = findKey(state, session.keyId);
    return key && isKeyActive(key, now) ? { session: copy(session), key: copy(key) } : undefined;
  }

  async endSession(id: string) {
    if (!Object.hasOwn(this.state.gui.sessions, id)) return false;
    return this.store.mutate((state) => Object.hasOwn(state.gui.sessions, id) && delete state.gui.sessions[id]);
  }

  endSessionsOf(keyId: string) {
    return this.store.mutate((state) => {
      const ids = Object.keys(state.gui.sessions).filter((id) => state.gui.sessions[id]!.keyId === keyId);
      for (const id of ids) delete state.gui.sessions[id];
      return ids.length;
    });
  }

  addGarment(garment: CatalogueGarment) {
    return this.store.mutate((state) => {
      const added = withoutEmptyCodes(copy(garment));
      const garments = state.gui.garments;
      if (Object.hasOwn(garments, added.id)) throw garmentIdTaken(added.id);
      checkCodesUnique(Object.values(garments), added.id, newCodes(added));
      garments[added.id] = added;
      return copy(added);
    });
  }

  updateGarment(id: string, change: (garment: CatalogueGarment) => void) {
    return this.store.mutate((state) => {
      const garments = state.gui.garments;
      const before = Object.hasOwn(garments, id) ? garments[id] : undefined;
      if (!before) throw garmentNotFound(id);
      // The change edits a copy, so that a refusal (its own or a taken code) leaves the garment as it was.
      const after = copy(before);
      change(after);
      checkChangedGarment(after, before);
      checkCodesUnique(Object.values(garments), id, newCodes(after, before));
      garments[id] = after;
      return { before: copy(before), after: copy(after) };
    });
  }

  removeGarment(id: string) {
    return this.store.mutate((state) => {
      const garments = state.gui.garments;
      const found = Object.hasOwn(garments, id) ? garments[id] : undefined;
      if (!found) throw garmentNotFound(id);
      delete garments[id];
      return copy(found);
    });
  }

  async garments() {
    return copy(Object.values(this.state.gui.garments)).sort(newestFirst);
  }

  async garment(id: string) {
    const garments = this.state.gui.garments;
    return Object.hasOwn(garments, id) ? copy(garments[id]) : undefined;
  }

  createShare(genId: string, hash: string, expiresAt: Date, now: Date): Promise<ShareLink> {
    return this.store.mutate((state) => {
      const shares = (state.gui.shares ??= {});
      for (const [id, share] of Object.entries(shares)) if (Date.parse(share.expiresAt) <= now.getTime()) delete shares[id];
      shares[genId] = { hash, expiresAt: expiresAt.toISOString() };
      return { genId, ...shares[genId] };
    });
  }

  async share(genId: string, now: Date) {
    const shares = this.state.gui.shares;
    const share = shares && Object.hasOwn(shares, genId) ? shares[genId] : undefined;
    return share && Date.parse(share.expiresAt) > now.getTime() ? { genId, ...share } : undefined;
  }

  async removeShare(genId: string) {
    if (!this.state.gui.shares || !Object.hasOwn(this.state.gui.shares, genId)) return false;
    return this.store.mutate(
      (state) => state.gui.shares !== undefined && Object.hasOwn(state.gui.shares, genId) && delete state.gui.shares[genId],
    );
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

function findKey(state: State, id: string): ApiKeyRecord | undefined {
  return state.keys.find((candidate) => candidate.id === id);
}

/** The GUI's own admin key, made (its secret discarded) when missing, revoked or retiring. */
function ensureGuiKey(state: State, now: Date): ApiKeyRecord {
  const existing = state.gui.keyId === null ? undefined : findKey(state, state.gui.keyId);
  if (guiKeyUsable(existing, now)) return existing;
  const { record } = createKey(state, GUI_KEY_NAME, 'admin', now);
  state.gui.keyId = record.id;
  return record;
}

/** Newest first; garments made in the same millisecond by id, the later first. */
export function newestFirst(a: CatalogueGarment, b: CatalogueGarment): number {
  return b.createdAt.localeCompare(a.createdAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
