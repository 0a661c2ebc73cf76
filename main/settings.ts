/**
 * The shell's own settings, from the command line and the environment:
 * kiosk mode and the update feed (off unless given). Every other argument is
 * passed on to the appliance's server (its flags: --port, --data-dir, …).
 */

/** What the shell was asked to do. */
export interface ShellSettings {
  /** Full screen, no window frame or menu: for a shop-floor screen. */
  kiosk: boolean;
  /** A generic electron-updater feed (latest.yml and friends); null: updates off. */
  updateFeedUrl: string | null;
  /** Arguments for the server (server/index.ts flags). */
  serverArgs: string[];
}

/** Reads the shell's settings; `--kiosk` and `--update-feed <url>` (or FITTINGROOM_KIOSK, FITTINGROOM_UPDATE_FEED). */
export function readSettings(argv: string[], env: NodeJS.ProcessEnv): ShellSettings {
  let kiosk = env.FITTINGROOM_KIOSK === '1' || env.FITTINGROOM_KIOSK === 'true';
  let updateFeedUrl = env.FITTINGROOM_UPDATE_FEED || null;
  const serverArgs: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--kiosk') kiosk = true;
    else if (arg === '--update-feed') updateFeedUrl = argv[++i] ?? null;
    else if (arg.startsWith('--update-feed=')) updateFeedUrl = arg.slice('--update-feed='.length);
    else if (arg.startsWith('--')) serverArgs.push(arg);
    else if (
      serverArgs.length > 0 &&
      serverArgs[serverArgs.length - 1]!.startsWith('--') &&
      !serverArgs[serverArgs.length - 1]!.includes('=')
    )
      serverArgs.push(arg);
  }
  if (updateFeedUrl !== null && !/^https:\/\//.test(updateFeedUrl)) {
    throw new Error(`the update feed must be an https:// address, not ${updateFeedUrl}`);
  }
  return { kiosk, updateFeedUrl, serverArgs };
}
