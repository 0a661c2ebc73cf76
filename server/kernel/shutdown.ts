/**
 * How a long-running fittingroom process (the appliance, a worker) stops: on SIGINT or SIGTERM, or when its owner
 * calls the returned function, it says so, awaits `close`, and exits 0 (1 if closing failed); a second request
 * while closing exits at once.
 */
export function stopOnSignals(name: string, doing: string, close: () => Promise<void>): (reason: string) => void {
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    console.log(`${name}: ${reason}, ${doing}…`);
    close().then(
      () => process.exit(0),
      (error) => {
        console.error(`${name}: shutdown failed`, error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return stop;
}
