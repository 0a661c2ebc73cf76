/**
 * The main side of the preload bridge (channels in ipc-contract.ts): hands
 * the launch token only to a frame showing the appliance's own origin.
 */
import { ipcMain } from 'electron';
import { CHANNELS } from './ipc-contract.ts';

/** Answers the bridge's calls; the sender's origin is checked on every message. */
export function setupIpc(origin: string, launchToken: string): void {
  ipcMain.handle(CHANNELS.launchToken, (event) => {
    const url = event.senderFrame?.url ?? '';
    let senderOrigin = '';
    try {
      senderOrigin = new URL(url).origin;
    } catch {
      senderOrigin = '';
    }
    return senderOrigin === origin ? launchToken : null;
  });
}
