/**
 * Security written out: every web contents may only show the appliance's own
 * origin, opens no new windows, attaches no webviews, and is granted no
 * permission except the camera (for the customer's photo) on that origin.
 */
import { app, session, shell, type WebContents } from 'electron';

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

/** Applies the navigation, window and permission guards for the appliance at `origin`. */
export function setupSecurity(origin: string): void {
  const guard = (contents: WebContents): void => {
    contents.on('will-navigate', (event, url) => {
      if (!sameOrigin(url, origin)) event.preventDefault();
    });
    contents.on('will-redirect', (event, url) => {
      if (!sameOrigin(url, origin)) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      // Links out of the appliance (documentation) open in the system browser, never in the app.
      if (/^https:\/\//.test(url)) void shell.openExternal(url);
      return { action: 'deny' };
    });
  };
  app.on('web-contents-created', (_event, contents) => guard(contents));

  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((contents, permission, callback, details) => {
    const camera = permission === 'media' && (details as { mediaTypes?: string[] }).mediaTypes?.every((type) => type === 'video');
    callback(Boolean(camera) && sameOrigin(contents.getURL(), origin));
  });
  ses.setPermissionCheckHandler((_contents, permission, requestingOrigin) => permission === 'media' && requestingOrigin === origin);
  ses.setDevicePermissionHandler(() => false);
}
