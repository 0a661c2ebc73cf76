/**
 * What the HTTP layer reads, each read named for what it is for. Routes, the API-key middleware and the GUI's
 * server side read through here and never the state document itself; writes stay `store.mutate(fn)` calls on
 * the features' own functions, or go through the stores of issue 16 (AppDeps.accounts and .state), which also
 * answer the reads that have moved to them (keys, the installation, the account, the ledger, the webhook
 * secret and events). The features that own a part of the state (the try-on service, the job runner,
 * the webhook dispatcher, retention) read it themselves. A second kind of store (issue 16) answers these reads.
 *
 * Every read sees committed state only (Store.state is the last durable document), so nothing here shows a
 * change that a crash could still lose.
 */
import { findGarment } from './gui/catalogue.ts';
import { findSession, guiSessionAuth } from './gui/session.ts';
import { sharedTryOn } from './gui/share.ts';
import { findGeneration, type Archive } from './store/archive.ts';
import type { Store } from './store/db.ts';
import type { ApiKeyRecord, CatalogueGarment, GenerationRecord, GuiSession } from './store/schema.ts';

export class StateReads {
  constructor(
    private readonly store: Store,
    private readonly archive: Archive,
    private readonly clock: () => Date,
  ) {}

  /** The try-on a take-home link shows, if the link is valid and the try-on still has its picture. */
  sharedTryOn(token: string): GenerationRecord | undefined {
    const state = this.store.state;
    const genId = sharedTryOn(state, token, this.clock());
    return genId ? findGeneration(state, this.archive, genId) : undefined;
  }

  /** The GUI session a cookie token names, with its key, while both are live. */
  guiSession(token: string): { session: GuiSession; key: ApiKeyRecord } | undefined {
    return findSession(this.store.state, token, this.clock());
  }

  /** Signing in to /api/v1 with the GUI's session cookie, as the API-key middleware takes it. */
  sessionAuth(): ReturnType<typeof guiSessionAuth> {
    return guiSessionAuth(() => this.store.state);
  }

  /** The shop-floor settings the GUI shows: whether a PIN is set, the GUI's key, erasing on a new customer. */
  guiSettings(): { pinHash: string | null; guiKeyId: string | null; eraseOnNewCustomer: boolean; autoCapture: boolean } {
    const { gui } = this.store.state;
    return {
      pinHash: gui.pinHash,
      guiKeyId: gui.keyId,
      eraseOnNewCustomer: gui.eraseOnNewCustomer === true,
      autoCapture: gui.autoCapture === true,
    };
  }

  /** The shop's catalogue, newest first. */
  garments(): CatalogueGarment[] {
    return Object.values(this.store.state.gui.garments).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }

  /** One catalogue garment (a 404 ApiError when there is none). */
  garment(id: string): CatalogueGarment {
    return findGarment(this.store.state.gui.garments, id);
  }
}
