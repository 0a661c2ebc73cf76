/**
 * The headless appliance: `npm run serve -- --port <p> --data-dir <dir>`.
 * The only module that listens (through startAppliance). Under a parent
 * process with an IPC channel (a Node fork in tests, or Electron's utility
 * process through `process.parentPort`) it reports `{type: 'ready', port}`.
 */
import { loadConfig } from './config.ts';
import { stopOnSignals } from './kernel/shutdown.ts';
import { startAppliance } from './appliance.ts';
import { redactUrl } from './kernel/redact.ts';
import { DatabaseOpenError, startSharedAppliance } from './shared-appliance.ts';
import { builtinEngineSpecs } from './engines/builtin.ts';
import { DataDirLockedError, DataDirMovedError } from './store/db.ts';

/** The part of Electron's utility-process parent port that the server uses. */
interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

async function main(): Promise<void> {
  const config = loadConfig(process.argv.slice(2));
  const extra = process.env.FITTINGROOM_ENGINES
    ? (JSON.parse(process.env.FITTINGROOM_ENGINES) as ReturnType<typeof builtinEngineSpecs>)
    : [];
  // The Electron shell's sign-in secret for its window; engine host processes must not inherit it.
  const guiLaunchToken = process.env.FITTINGROOM_GUI_LAUNCH_TOKEN;
  delete process.env.FITTINGROOM_GUI_LAUNCH_TOKEN;
  const engines = [...(config.builtinEngines ? builtinEngineSpecs() : []), ...extra];
  const appliance = config.database
    ? await startSharedAppliance({ config, database: config.database, engines, ...(guiLaunchToken ? { guiLaunchToken } : {}) })
    : await startAppliance({ config, engines, ...(guiLaunchToken ? { guiLaunchToken } : {}) });
  const ready = appliance.engines.list().filter((engine) => engine.ready);
  const where = config.database ? `state in PostgreSQL (${redactUrl(config.database)})` : `data in ${config.dataDir}`;
  console.log(`fittingroom is running at ${appliance.url}/ (${where})`);
  console.log(`  Shop-floor GUI: open ${appliance.url}/ in a browser and sign in with an admin key (or the staff PIN).`);
  console.log(`  API: ${appliance.url}/api/v1  health: ${appliance.url}/api/v1/health`);
  if (config.database)
    console.log(
      ready.length === 0
        ? "  This process runs no engine: try-ons run on the fleet's workers (`fittingroom worker --database …`; GET /api/v1/engines)."
        : `  Engines here, as a worker of the fleet: ${ready.map((engine) => `${engine.id} (${engine.device})`).join(', ')}`,
    );
  else if (ready.length === 0) console.log('  No try-on engine is installed yet: submits are refused until one is (GET /api/v1/engines).');
  else console.log(`  Engines: ${ready.map((engine) => `${engine.id} (${engine.device})`).join(', ')}`);
  if (appliance.firstAdminKey) {
    console.log(
      `\n  First start: your admin API key (shown once, also saved to ${config.dataDir}/first-admin-key):\n\n    ${appliance.firstAdminKey}\n`,
    );
  }
  const readyMessage = { type: 'ready', port: appliance.port };
  process.send?.(readyMessage);
  // Electron's utility process has no process.send; it has process.parentPort (typed here, no electron import).
  const parentPort = (process as { parentPort?: ParentPort }).parentPort;
  parentPort?.postMessage(readyMessage);

  const stop = stopOnSignals('fittingroom', 'finishing up', () => appliance.close());
  // The Electron shell asks for a clean stop by message (a signal does not reach a utility process on Windows).
  parentPort?.on('message', (event) => {
    if ((event.data as { type?: unknown } | null)?.type === 'shutdown') stop('shutdown asked by the shell');
  });
}

main().catch((error) => {
  if (
    error instanceof DataDirLockedError ||
    error instanceof DataDirMovedError ||
    error instanceof DatabaseOpenError ||
    (error instanceof Error && /^(--|unknown option|unexpected argument|FITTINGROOM_)/.test(error.message))
  ) {
    console.error(`fittingroom: ${error.message}`);
  } else {
    console.error('fittingroom: could not start', error);
  }
  process.exit(1);
});
