/** One timer per deadline (MAX_SESSION_DURATION today): nothing sweeps, an idle server sleeps. */
export class Deadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  /** Runs `fn` in `ms` (replacing any deadline of `id`); deadlines beyond setTimeout's range are not armed. */
  arm(id: string, ms: number, fn: () => void): void {
    this.clear(id);
    if (ms > 2 ** 31 - 1) return;
    const t = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, Math.max(0, ms));
    t.unref();
    this.timers.set(id, t);
  }

  clear(id: string): void {
    const t = this.timers.get(id);
    if (t) clearTimeout(t);
    this.timers.delete(id);
  }

  clearAll(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
