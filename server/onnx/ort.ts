/**
 * The only module that imports onnxruntime-node. It creates sessions (the
 * CPU execution provider by default; CUDA, DirectML or CoreML when asked for
 * and present), checks feeds against the model's inputs by name, type and
 * shape before each run, logs what it was given when a run fails, and
 * releases sessions. Callers deal in plain `FloatTensor`s.
 */
import * as ort from 'onnxruntime-node';

/** Execution providers a caller may ask for, best first. CPU is always appended. */
export type ExecutionProvider = 'cuda' | 'dml' | 'coreml' | 'cpu';

/** A float32 tensor in plain form. */
export interface FloatTensor {
  data: Float32Array;
  dims: readonly number[];
}

export interface SessionOptions {
  /** Providers to try in order (default CPU only); CPU is the fallback. */
  providers?: ExecutionProvider[];
  /** Intra-op threads (default: ONNX Runtime's choice). */
  threads?: number;
  /** A name for logs and errors (default: the model path). */
  name?: string;
  log?: (message: string) => void;
}

/** The providers this onnxruntime-node build can load (CUDA only after its libraries are installed). */
export function supportedProviders(): string[] {
  return ort.listSupportedBackends().map((b) => b.name);
}

function describeFeeds(feeds: Record<string, FloatTensor>): string {
  return Object.entries(feeds)
    .map(([name, t]) => `${name}: float32[${t.dims.join(',')}] (${t.data.length} values)`)
    .join('; ');
}

/** An inference session over one ONNX model. */
export class OrtSession {
  readonly name: string;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** The provider the session runs on. */
  readonly provider: ExecutionProvider;
  private session: ort.InferenceSession | null;
  private readonly log: (message: string) => void;

  private constructor(session: ort.InferenceSession, name: string, provider: ExecutionProvider, log: (message: string) => void) {
    this.session = session;
    this.name = name;
    this.provider = provider;
    this.log = log;
    this.inputNames = session.inputNames;
    this.outputNames = session.outputNames;
  }

  /** Loads a model from a path or bytes; falls back to CPU when a requested provider cannot start. */
  static async create(model: string | Uint8Array, options: SessionOptions = {}): Promise<OrtSession> {
    const name = options.name ?? (typeof model === 'string' ? model : 'model');
    const log = options.log ?? ((message: string) => console.error(`fittingroom: ${message}`));
    const base: ort.InferenceSession.SessionOptions = {
      graphOptimizationLevel: 'all',
      ...(options.threads ? { intraOpNumThreads: options.threads, interOpNumThreads: 1 } : {}),
    };
    const wanted = (options.providers ?? []).filter((p) => p !== 'cpu');
    for (const provider of wanted) {
      try {
        const session = await OrtSession.open(model, { ...base, executionProviders: [provider, 'cpu'] });
        return new OrtSession(session, name, provider, log);
      } catch (error) {
        log(`${name}: execution provider ${provider} unavailable (${(error as Error).message.split('\n')[0]}); trying the next`);
      }
    }
    const session = await OrtSession.open(model, { ...base, executionProviders: ['cpu'] });
    return new OrtSession(session, name, 'cpu', log);
  }

  private static open(model: string | Uint8Array, options: ort.InferenceSession.SessionOptions): Promise<ort.InferenceSession> {
    return typeof model === 'string' ? ort.InferenceSession.create(model, options) : ort.InferenceSession.create(model, options);
  }

  /** The static input shape the model declares for `name` (symbolic dims as -1). */
  inputShape(name: string): number[] {
    const meta = this.live().inputMetadata.find((m) => m.name === name);
    if (!meta || !meta.isTensor) throw new Error(`${this.name}: no tensor input ${name}`);
    return meta.shape.map((d) => (typeof d === 'number' ? d : -1));
  }

  /** The static output shape the model declares for `name` (symbolic dims as -1). */
  outputShape(name: string): number[] {
    const meta = this.live().outputMetadata.find((m) => m.name === name);
    if (!meta || !meta.isTensor) throw new Error(`${this.name}: no tensor output ${name}`);
    return meta.shape.map((d) => (typeof d === 'number' ? d : -1));
  }

  /** Runs the model. Feeds must name exactly the model's inputs, with matching shapes. */
  async run(feeds: Record<string, FloatTensor>): Promise<Record<string, FloatTensor>> {
    const session = this.live();
    this.check(feeds);
    const inputs: Record<string, ort.Tensor> = {};
    for (const [name, t] of Object.entries(feeds)) inputs[name] = new ort.Tensor('float32', t.data, t.dims);
    let results: ort.InferenceSession.ReturnType;
    try {
      results = await session.run(inputs);
    } catch (error) {
      this.log(`${this.name}: run failed with feeds ${describeFeeds(feeds)}; inputs ${this.describeInputs()}`);
      throw error;
    }
    const out: Record<string, FloatTensor> = {};
    for (const [name, t] of Object.entries(results)) {
      if (t.type !== 'float32') throw new Error(`${this.name}: output ${name} is ${t.type}, expected float32`);
      out[name] = { data: t.data as Float32Array, dims: t.dims };
      t.dispose?.();
    }
    for (const t of Object.values(inputs)) t.dispose?.();
    return out;
  }

  /** Releases the native session; later runs throw. Idempotent. */
  async release(): Promise<void> {
    const session = this.session;
    this.session = null;
    await session?.release();
  }

  private live(): ort.InferenceSession {
    if (!this.session) throw new Error(`${this.name}: session released`);
    return this.session;
  }

  private describeInputs(): string {
    return this.live()
      .inputMetadata.map((m) => (m.isTensor ? `${m.name}: ${m.type}[${m.shape.join(',')}]` : m.name))
      .join('; ');
  }

  private check(feeds: Record<string, FloatTensor>): void {
    const given = Object.keys(feeds).sort();
    const expected = [...this.inputNames].sort();
    if (given.join('\0') !== expected.join('\0')) {
      throw new Error(`${this.name}: feeds [${given.join(', ')}] do not match the model's inputs [${expected.join(', ')}]`);
    }
    for (const [name, t] of Object.entries(feeds)) {
      const shape = this.inputShape(name);
      const fits = shape.length === t.dims.length && shape.every((d, k) => d < 0 || d === t.dims[k]);
      const count = t.dims.reduce((a, b) => a * b, 1);
      if (!fits || count !== t.data.length) {
        throw new Error(`${this.name}: feed ${describeFeeds({ [name]: t })} does not fit input ${name} [${shape.join(',')}]`);
      }
    }
  }
}
