/**
 * What the HTTP layer depends on, in its own module: routes take it, createApp (http-app.ts) is given it, and the
 * composition (appliance.ts, or a test) builds it.
 */
import type { Config } from '../config.ts';
import type { FramingGuide } from '../gui/framing.ts';
import type { TerminalNotifier } from '../jobs/notifier.ts';
import type { EngineCatalog, JobRunner } from '../jobs/runner.ts';
import type { AccountStore } from '../state/accounts.ts';
import type { CataloguePhotoStore } from '../state/catalogue-photos.ts';
import type { ImageStore } from '../state/images.ts';
import type { StateGateway } from '../state/types.ts';
import type { Archive } from '../store/archive.ts';
import type { Store } from '../store/db.ts';
import type { TryOnService } from '../tryons/service.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import type { RedemptionJournal } from '../vouchers/journal.ts';

/** Everything the HTTP layer depends on. */
export interface AppDeps {
  config: Config;
  /** Writes: `store.mutate(fn)` with a feature's function; reads go through the stores below. */
  store: Store;
  /** Keys (and, next, the installation, webhook secrets, the GUI's sessions and catalogue) on any store. */
  accounts: AccountStore;
  /** Credits, vouchers and try-ons' state changes on any store (submit and cancel go through `tryOns`). */
  state: StateGateway;
  /** A try-on's images (the data directory on one PC; PostgreSQL or a shared directory on a database). */
  images: ImageStore;
  /** The photos of the GUI's garment catalogue (the data directory's catalogue/ on one PC). */
  cataloguePhotos: CataloguePhotoStore;
  archive: Archive;
  engines: EngineCatalog;
  runner: JobRunner;
  notifier: TerminalNotifier;
  /** Submit, find, list, cancel, erase: every try-on call goes through it. */
  tryOns: TryOnService;
  webhooks: WebhookDispatcher;
  /** Vouchers ever redeemed here, beyond what a restored state file remembers. */
  vouchersRedeemed: RedemptionJournal;
  clock: () => Date;
  version: string;
  log: (message: string, error?: unknown) => void;
  /** The camera's framing advice for the GUI (its models load on first use). */
  framing: FramingGuide;
  /** The token the Electron shell signs its window in with (none headless). */
  guiLaunchToken?: string | null;
}
