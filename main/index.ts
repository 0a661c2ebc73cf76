/**
 * The Electron main process: only a composition root. One instance at a
 * time; the server in a utility process; the window on its GUI, signed in
 * through the preload bridge; a clean stop on quit (the server puts running
 * try-ons back in the queue before it exits).
 */
import { randomBytes } from 'node:crypto';
import { app, dialog } from 'electron';
import { setupIpc } from './ipc.ts';
import { setupSecurity } from './security.ts';
import { startServerHost, type ServerHost } from './server-host.ts';
import { readSettings } from './settings.ts';
import { setupUpdater } from './updater.ts';
import { createMainWindow, preloadPath } from './windows.ts';

const log = (message: string): void => console.log(`fittingroom shell: ${message}`);

async function main(): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  const settings = readSettings(process.argv.slice(app.isPackaged ? 1 : 2), process.env);
  await app.whenReady();

  const launchToken = randomBytes(32).toString('base64url');
  let server: ServerHost;
  try {
    server = await startServerHost({ appPath: app.getAppPath(), args: settings.serverArgs, launchToken });
  } catch (error) {
    dialog.showErrorBox('fittingroom could not start', `${(error as Error).message}\n\nSee the log for details.`);
    app.exit(1);
    return;
  }
  const origin = new URL(server.url).origin;
  setupSecurity(origin);
  setupIpc(origin, launchToken);
  // main/ is bundled as CommonJS (scripts/build-shell.ts): __dirname is the bundle's folder, where preload.cjs lies.
  let window = createMainWindow({ url: server.url, preload: preloadPath(__dirname), kiosk: settings.kiosk });
  setupUpdater(settings.updateFeedUrl, log);

  app.on('second-instance', () => {
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('activate', () => {
    if (window.isDestroyed()) window = createMainWindow({ url: server.url, preload: preloadPath(__dirname), kiosk: settings.kiosk });
  });
  server.onUnexpectedExit((code) => {
    dialog.showErrorBox('fittingroom stopped', `The appliance's server stopped (code ${code}). Start fittingroom again.`);
    app.exit(1);
  });
  app.on('window-all-closed', () => app.quit());

  let stopped = false;
  app.on('before-quit', (event) => {
    if (stopped) return;
    event.preventDefault();
    log('stopping the server (running try-ons go back to the queue)…');
    void server.stop().finally(() => {
      stopped = true;
      app.quit();
    });
  });
}

main().catch((error: unknown) => {
  console.error('fittingroom shell: could not start', error);
  app.exit(1);
});
