/**
 * How much a node may make this server send its clients: a token bucket per node for its notices, resource
 * updates and list changes. A burst of NOTICE_BURST passes at once, then NOTICE_RATE a second; the rest are dropped and counted (a
 * node's own sessions produce a few a second at most: a turn end, a permission, a screen update every 300 ms).
 */
export const NOTICE_RATE = 20;
export const NOTICE_BURST = 100;

export class Bucket {
  private tokens: number;
  private at: number;
  /** Dropped since the last `takeDropped()`. */
  private dropped = 0;

  constructor(
    private readonly rate = NOTICE_RATE,
    private readonly burst = NOTICE_BURST,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.at = now();
  }

  /** Whether one more may pass now (false: it is dropped and counted). */
  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.at) / 1000) * this.rate);
    this.at = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped++;
    return false;
  }

  /** How many were dropped since the last call, and resets the count. */
  takeDropped(): number {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}
