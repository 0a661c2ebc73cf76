/**
 * `npm start`: the Electron shell where it can start, otherwise the headless
 * appliance with a clear word on why and where to open the GUI. Electron
 * cannot start without its binary (the electron package fetches it on first
 * use, which needs a connection: `npx install-electron`) or, on Linux,
 * without a display. FITTINGROOM_HEADLESS=1 asks for headless outright.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Why Electron cannot start here, or null; plus the binary's path when it can. */
export function electronStatus(env: NodeJS.ProcessEnv = process.env): { reason: string } | { binary: string } {
  if (env.FITTINGROOM_HEADLESS === '1' || env.FITTINGROOM_HEADLESS === 'true') return { reason: 'FITTINGROOM_HEADLESS is set' };
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return { reason: 'the electron package is not installed (npm install --omit=dev leaves it out)' };
  }
  // Read path.txt ourselves: require('electron') would try to download the binary, which needs a connection.
  const pathFile = join(dir, 'path.txt');
  const binary = existsSync(pathFile) ? join(env.ELECTRON_OVERRIDE_DIST_PATH ?? join(dir, 'dist'), readFileSync(pathFile, 'utf8')) : null;
  if (!binary || !existsSync(binary)) {
    return { reason: 'the Electron binary is not installed here (with a connection, `npx install-electron` fetches it)' };
  }
  if (process.platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY)
    return { reason: 'there is no display (DISPLAY and WAYLAND_DISPLAY are unset)' };
  return { binary };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const status = electronStatus();
  if ('reason' in status) {
    console.log(`fittingroom: the desktop app cannot start: ${status.reason}.`);
    console.log('fittingroom: starting the headless appliance instead; open the address it prints in a browser to use the GUI.');
    await import('../server/index.ts');
    return;
  }
  const { buildShell } = await import('./build-shell.ts');
  const entry = await buildShell();
  const child = spawn(status.binary, [entry, ...args], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] === import.meta.filename) await main();
