/**
 * The GUI's window: the appliance's page with context isolation, the
 * sandbox, no Node integration, and the preload bridge; kiosk mode on demand.
 */
import { join } from 'node:path';
import { BrowserWindow } from 'electron';

/** Opens the main window on the appliance's GUI. */
export function createMainWindow(options: { url: string; preload: string; kiosk: boolean }): BrowserWindow {
  const window = new BrowserWindow({
    width: 1366,
    height: 900,
    minWidth: 1024,
    minHeight: 700,
    show: false,
    kiosk: options.kiosk,
    autoHideMenuBar: true,
    backgroundColor: '#f5f6f8',
    title: 'fittingroom',
    webPreferences: {
      preload: options.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());
  void window.loadURL(`${options.url}/`);
  return window;
}

/** The preload script next to the bundled main script. */
export function preloadPath(mainDir: string): string {
  return join(mainDir, 'preload.cjs');
}
