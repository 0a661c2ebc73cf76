/**
 * In-process wake-ups for bounded waits: a waiter subscribes, then reads the
 * state (subscribe-then-check, so a transition between the two is never
 * missed) and costs nothing but a listener and a timer while it waits.
 */
export type Listener = () => void;

export class TerminalNotifier {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly watchers = new Set<(id: string) => void>();

  /** Calls `watcher` whenever any generation becomes terminal; returns the unsubscribe function. */
  watch(watcher: (id: string) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Calls `listener` when generation `id` becomes terminal; returns the unsubscribe function. */
  subscribe(id: string, listener: Listener): () => void {
    let set = this.listeners.get(id);
    if (!set) {
      set = new Set();
      this.listeners.set(id, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(id);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(id);
    };
  }

  /** Announces that generation `id` is terminal (after the change is durable). */
  publish(id: string): void {
    for (const watcher of this.watchers) watcher(id);
    const set = this.listeners.get(id);
    if (!set) return;
    this.listeners.delete(id);
    for (const listener of set) listener();
  }

  /** Wakes every waiter (the appliance is stopping): each answers with the state it finds. */
  releaseAll(): void {
    const sets = [...this.listeners.values()];
    this.listeners.clear();
    for (const set of sets) for (const listener of set) listener();
  }

  /** The generations someone waits on now. */
  waitedIds(): string[] {
    return [...this.listeners.keys()];
  }

  /** How many requests are waiting now. */
  waiting(): number {
    let count = 0;
    for (const set of this.listeners.values()) count += set.size;
    return count;
  }
}
