/**
 * Updates through electron-updater from a generic feed, only when one is
 * configured (--update-feed or FITTINGROOM_UPDATE_FEED): off by default, as
 * shops may run offline.
 */
import electronUpdater from 'electron-updater';

/** Checks the feed once at start and then every six hours; downloads install on quit. */
export function setupUpdater(feedUrl: string | null, log: (message: string) => void): void {
  if (feedUrl === null) return;
  const { autoUpdater } = electronUpdater;
  autoUpdater.setFeedURL({ provider: 'generic', url: feedUrl });
  autoUpdater.autoInstallOnAppQuit = true;
  autoUpdater.on('error', (error: Error) => log(`update check failed: ${error.message}`));
  autoUpdater.on('update-downloaded', (info: { version: string }) =>
    log(`update ${info.version} downloaded; it installs when the app quits`),
  );
  const check = (): void => void autoUpdater.checkForUpdates().catch((error: Error) => log(`update check failed: ${error.message}`));
  check();
  setInterval(check, 6 * 3_600_000).unref();
}
