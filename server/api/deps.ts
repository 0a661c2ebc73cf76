/**
 * What the HTTP layer depends on, in its own module: routes take it, createApp (http-app.ts) is given it, and the
 * composition (appliance.ts, or a test) builds it.
 */
import type { Config } from '../config.ts';
import type { FramingGuide } from '../gui/framing.ts';
import type { EngineCatalog } from '../jobs/runner.ts';
import type { AccountStore } from '../state/accounts.ts';
import type { CataloguePhotoStore } from '../state/catalogue-photos.ts';
import type { ImageStore } from '../state/images.ts';
import type { StateGateway } from '../state/types.ts';
import type { TryOnJobs, TryOnService } from '../tryons/service.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import type { RedemptionJournal } from '../vouchers/journal.ts';

/** Everything the HTTP layer depends on: the same on one PC (lowdb) and on a shared database (PostgreSQL). */
export interface AppDeps {
  config: Config;
  /** The installation, keys, webhook secrets, the GUI's sessions, PIN and catalogue, take-home links. */
  accounts: AccountStore;
  /** Credits, vouchers and try-ons' state changes (submit and cancel go through `tryOns`). */
  state: StateGateway;
  /** A try-on's images (the data directory on one PC; PostgreSQL or a shared directory on a database). */
  images: ImageStore;
  /** The photos of the GUI's garment catalogue (the data directory's catalogue/ on one PC). */
  cataloguePhotos: CataloguePhotoStore;
  /** The engines a submit may use: this PC's, or those the fleet of workers runs. */
  engines: EngineCatalog;
  /** What runs try-ons: the queue's depth for health. */
  jobs: TryOnJobs;
  /** Submit, find, list, cancel, erase: every try-on call goes through it. */
  tryOns: TryOnService;
  webhooks: WebhookDispatcher;
  /**
   * One PC: vouchers ever redeemed here, beyond what a restored state file remembers. null on a database, whose
   * own constraint keeps a redemption for good.
   */
  vouchersRedeemed: RedemptionJournal | null;
  clock: () => Date;
  version: string;
  log: (message: string, error?: unknown) => void;
  /** The camera's framing advice for the GUI (its models load on first use). */
  framing: FramingGuide;
  /** The token the Electron shell signs its window in with (none headless). */
  guiLaunchToken?: string | null;
}
