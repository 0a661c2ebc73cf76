/**
 * Runs the appliance's server (server/index.ts, through tsx) in an Electron
 * utility process, never in main: a crash in native code (ONNX Runtime,
 * sharp) cannot take the window down. The server listens on 127.0.0.1 and
 * reports `{type: 'ready', port}`; stopping asks it to shut down cleanly
 * (running try-ons go back to the queue) and kills it only after a grace period.
 */
import { join } from 'node:path';
import { utilityProcess, type UtilityProcess } from 'electron';

const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;

/** A running server. */
export interface ServerHost {
  url: string;
  /** Resolves once the process has exited. */
  stop(): Promise<void>;
  /** Called if the server exits on its own. */
  onUnexpectedExit(handler: (code: number) => void): void;
}

/** Starts the server from the app's folder with the shell's launch token; resolves when it is listening. */
export function startServerHost(options: { appPath: string; args: string[]; launchToken: string }): Promise<ServerHost> {
  const child: UtilityProcess = utilityProcess.fork(join(options.appPath, 'server', 'index.ts'), ['--host', '127.0.0.1', ...options.args], {
    serviceName: 'fittingroom server',
    cwd: options.appPath,
    // tsx runs the TypeScript sources, as it does headless; resolved from the app's node_modules (cwd).
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, FITTINGROOM_GUI_LAUNCH_TOKEN: options.launchToken },
    stdio: 'inherit',
  });
  let exitHandler: (code: number) => void = () => undefined;
  let stopping = false;
  const exited = new Promise<number>((resolve) => child.once('exit', resolve));
  void exited.then((code) => {
    if (!stopping) exitHandler(code);
  });

  return new Promise<ServerHost>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not report ready in time')), READY_TIMEOUT_MS);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (code ${code}) before it was ready`));
    });
    child.on('message', (message: { type?: string; port?: number }) => {
      if (message?.type !== 'ready' || typeof message.port !== 'number') return;
      clearTimeout(timer);
      resolve({
        url: `http://127.0.0.1:${message.port}`,
        async stop() {
          if (stopping) {
            await exited;
            return;
          }
          stopping = true;
          child.postMessage({ type: 'shutdown' });
          const force = setTimeout(() => child.kill(), STOP_GRACE_MS);
          await exited;
          clearTimeout(force);
        },
        onUnexpectedExit(handler) {
          exitHandler = handler;
        },
      });
    });
  });
}
