/**
 * The preload script (sandboxed, context-isolated): exposes exactly the
 * ShellBridge of ipc-contract.ts as `window.fittingroomShell`, nothing else.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { CHANNELS, type ShellBridge } from './ipc-contract.ts';

const bridge: ShellBridge = {
  launchToken: () => ipcRenderer.invoke(CHANNELS.launchToken) as Promise<string | null>,
};

contextBridge.exposeInMainWorld('fittingroomShell', bridge);
