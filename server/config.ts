/**
 * The appliance's settings: defaults, overridden by environment variables
 * (FITTINGROOM_*), overridden by command-line flags.
 */
import { availableParallelism, homedir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits } from './images/index.ts';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /**
   * A PostgreSQL connection string (`--database`, FITTINGROOM_DATABASE_URL): the shop's state is shared there by
   * several machines. Today GPU workers use it (`fittingroom worker`); the HTTP API still runs on `dataDir`.
   */
  database: string | null;
  /** On a shared database: a directory every node mounts for images, instead of keeping them in PostgreSQL. */
  imagesDir: string | null;
  /** Absolute base for URLs in replies (statusUrl, imageUrl); default: from the request's Host. */
  publicBaseUrl: string | null;
  /** Names the appliance answers to beyond its own (see api/middleware/host-check.ts). */
  allowedHosts: string[];
  bodyLimitBytes: number;
  imageLimits: ImageLimits;
  trialCredits: number;
  trialDays: number;
  /** Default bound for `wait=true`, seconds. */
  waitDefaultSeconds: number;
  /** Largest bound a client may ask for, seconds (at most 120). */
  waitMaxSeconds: number;
  /** Requests held by `wait` at once, over all keys and per key; beyond them a status is answered at once. */
  maxWaiters: number;
  maxWaitersPerKey: number;
  /**
   * Open connections at once, over all clients (below the usual limit of 1,024 open files) and per client address
   * other than this machine's own 127.0.0.1 and ::1; beyond them a new connection is closed at once.
   */
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** A request whose body sends nothing for this long is cut off. */
  bodyIdleTimeoutMs: number;
  submitsPerMinute: number;
  keyRotationGraceSeconds: number;
  imageRetentionDays: number;
  idempotencyRetentionHours: number;
  /** Erase a generation's inputs as soon as it is terminal. */
  eraseInputsWhenDone: boolean;
  maxQueueDepth: number;
  maxAttempts: number;
  jobTimeoutSeconds: number;
  /**
   * Try-ons that may run at once on the CPU: the runner's 'cpu' limit, and so the
   * number of warp engine processes (≈ 0.8 GiB each at their peak) it starts under load.
   */
  engineWorkers: number;
  /** Run the engines that come with the appliance; false leaves only those of FITTINGROOM_ENGINES (an API-only or test process). */
  builtinEngines: boolean;
  /** Jobs that may run at once on each device ('cpu', 'cuda', …); others default to 1. 'cpu' follows engineWorkers. */
  deviceConcurrency: Record<string, number>;
  engineMemoryLimitMb: number;
  sweepIntervalSeconds: number;
  /** Finished records move to the archive in batches of at least this many ledger entries… */
  archiveMinEntries: number;
  /** …checked this often, so the state document holds little beyond live work. */
  archiveIntervalSeconds: number;
  /** Ed25519 public keys (base64 of the DER SubjectPublicKeyInfo) whose vouchers this appliance accepts. */
  trustedIssuerKeys: string[];
  /** Webhook delivery: timeout per attempt. */
  webhookTimeoutMs: number;
  /** Webhook delivery: delays before each retry, in seconds (each ±20 % jitter). */
  webhookRetrySeconds: number[];
  /** How long the old webhook secret keeps signing after a rotation, in hours. */
  webhookSecretOverlapHours: number;
  /** CIDR ranges webhooks may go to; empty: loopback, private LAN and public addresses. */
  webhookAllow: string[];
  /** CIDR ranges webhooks never go to, on top of the ranges that are always refused. */
  webhookDeny: string[];
}

/** The per-user data directory of this platform. */
export function defaultDataDir(): string {
  if (process.platform === 'win32') return join(process.env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'fittingroom');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'fittingroom');
  return join(process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'fittingroom');
}

/** Memory the default number of engine workers allows each: a warp engine process peaks at ≈ 0.8 GiB. */
const MEMORY_PER_WORKER = 2 * 1024 ** 3;

/**
 * One engine worker per core (ONNX Runtime runs one thread in each), but no more
 * than one per 2 GiB of memory: the try-ons of a small machine must not swap.
 */
export function defaultEngineWorkers(): number {
  return Math.max(1, Math.min(availableParallelism(), Math.floor(totalmem() / MEMORY_PER_WORKER)));
}

/** The defaults, with a data directory of the caller's choosing. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  const engineWorkers = overrides.engineWorkers ?? defaultEngineWorkers();
  return {
    host: '127.0.0.1',
    port: 8787,
    dataDir: defaultDataDir(),
    database: null,
    imagesDir: null,
    publicBaseUrl: null,
    allowedHosts: [],
    bodyLimitBytes: 50 * 1024 * 1024,
    imageLimits: DEFAULT_IMAGE_LIMITS,
    trialCredits: 25,
    trialDays: 30,
    waitDefaultSeconds: 30,
    waitMaxSeconds: 120,
    maxWaiters: 1000,
    maxWaitersPerKey: 500,
    maxConnections: 900,
    maxConnectionsPerAddress: 128,
    bodyIdleTimeoutMs: 10_000,
    submitsPerMinute: 60,
    keyRotationGraceSeconds: 24 * 3600,
    imageRetentionDays: 7,
    idempotencyRetentionHours: 24,
    eraseInputsWhenDone: false,
    maxQueueDepth: 1000,
    maxAttempts: 3,
    jobTimeoutSeconds: 300,
    engineWorkers,
    engineMemoryLimitMb: 8192,
    sweepIntervalSeconds: 600,
    archiveMinEntries: 100,
    archiveIntervalSeconds: 10,
    builtinEngines: true,
    trustedIssuerKeys: [],
    webhookTimeoutMs: 10_000,
    webhookRetrySeconds: [5, 30, 120, 600, 1800, 3600, 10_800, 21_600],
    webhookSecretOverlapHours: 24,
    webhookAllow: [],
    webhookDeny: [],
    ...overrides,
    deviceConcurrency: { cpu: engineWorkers, ...overrides.deviceConcurrency },
  };
}

const FLAGS = {
  port: 'port',
  host: 'host',
  'data-dir': 'dataDir',
  database: 'database',
  'images-dir': 'imagesDir',
  'public-url': 'publicBaseUrl',
  'allowed-hosts': 'allowedHosts',
  'trial-credits': 'trialCredits',
  'submits-per-minute': 'submitsPerMinute',
  'job-timeout': 'jobTimeoutSeconds',
  'wait-default': 'waitDefaultSeconds',
  'max-queue': 'maxQueueDepth',
  'max-connections': 'maxConnections',
  'erase-inputs': 'eraseInputsWhenDone',
  'retention-days': 'imageRetentionDays',
  'trusted-issuers': 'trustedIssuerKeys',
  'webhook-allow': 'webhookAllow',
  'webhook-deny': 'webhookDeny',
  'engine-workers': 'engineWorkers',
  'builtin-engines': 'builtinEngines',
} as const satisfies Record<string, keyof Config>;

type FlagName = keyof typeof FLAGS;

function isFlag(name: string): name is FlagName {
  return Object.hasOwn(FLAGS, name);
}

function setValue(config: Config, key: keyof Config, raw: string, origin: string): void {
  const current = config[key];
  if (Array.isArray(current)) {
    (config as unknown as Record<string, unknown>)[key] = raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  } else if (typeof current === 'boolean') {
    if (!/^(true|false|1|0)$/.test(raw)) throw new Error(`${origin} must be true or false, got "${raw}"`);
    (config as unknown as Record<string, unknown>)[key] = raw === 'true' || raw === '1';
  } else if (typeof current === 'number') {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0) throw new Error(`${origin} must be a non-negative number, got "${raw}"`);
    (config as unknown as Record<string, unknown>)[key] = value;
  } else if (key === 'dataDir' || key === 'imagesDir') {
    config[key] = resolve(raw);
  } else {
    (config as unknown as Record<string, unknown>)[key] = raw;
  }
}

/** Builds the configuration from environment and argv (`--port 8787 --data-dir ./data`). */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  const config = defaultConfig();
  for (const [flag, key] of Object.entries(FLAGS)) {
    // A connection string is a URL, and named as one.
    const name = flag === 'database' ? 'FITTINGROOM_DATABASE_URL' : `FITTINGROOM_${flag.toUpperCase().replaceAll('-', '_')}`;
    const value = env[name];
    if (value !== undefined && value !== '') setValue(config, key, value, name);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (!isFlag(name))
      throw new Error(
        `unknown option --${name} (known: ${Object.keys(FLAGS)
          .map((f) => `--${f}`)
          .join(', ')})`,
      );
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    setValue(config, FLAGS[name], value, `--${name}`);
  }
  if (!Number.isInteger(config.port) || config.port > 65535) throw new Error(`--port must be an integer from 0 to 65535`);
  if (!Number.isInteger(config.engineWorkers) || config.engineWorkers < 1) {
    throw new Error(`--engine-workers (FITTINGROOM_ENGINE_WORKERS) must be a whole number of at least 1, got ${config.engineWorkers}`);
  }
  config.deviceConcurrency.cpu = config.engineWorkers;
  config.waitMaxSeconds = Math.min(config.waitMaxSeconds, 120);
  config.waitDefaultSeconds = Math.min(config.waitDefaultSeconds, config.waitMaxSeconds);
  return config;
}
