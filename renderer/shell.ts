/**
 * The Electron shell's bridge (main/preload.ts), present only inside the app
 * window: it hands the GUI a token that signs it in without a key or PIN.
 */
import type { ShellBridge } from '../main/ipc-contract.ts';

declare global {
  interface Window {
    fittingroomShell?: ShellBridge;
  }
}

/** The shell's sign-in token, or null in a plain browser. */
export async function shellLaunchToken(): Promise<string | null> {
  const bridge = window.fittingroomShell;
  if (!bridge) return null;
  try {
    return await bridge.launchToken();
  } catch {
    return null;
  }
}
