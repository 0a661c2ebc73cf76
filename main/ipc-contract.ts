/**
 * The one file that declares what crosses the preload bridge: channel names
 * and the API the renderer sees as `window.fittingroomShell`. Both main/ and
 * renderer/ import it (renderer/ type-only).
 */

/** IPC channels, invoked by the preload script and handled in main. */
export const CHANNELS = Object.freeze({
  /** → the secret that signs the window in (POST /gui/api/session {method: 'shell'}). */
  launchToken: 'fittingroom:launch-token',
});

/** What the preload script exposes to the GUI. */
export interface ShellBridge {
  /** The token that signs this window in, or null when the shell has none. */
  launchToken(): Promise<string | null>;
}
