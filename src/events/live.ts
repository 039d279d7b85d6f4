/**
 * A session this server process follows: its folded status, the tail of its events log, and the
 * callers waiting for it to change. Waiters wake on events, never on a timer poll.
 */
import { EventTail } from "./eventlog.js";
import { SessionError } from "../core/errors.js";
import { initialFold, reduce, type Folded, type LogEvent } from "./reducer.js";

export type Listener = (f: Folded, events: LogEvent[]) => void;

export class LiveSession {
  fold: Folded = initialFold();
  private readonly listeners = new Set<Listener>();
  private tail: EventTail | undefined;
  /** Serializes sends to this session within this process. */
  sendChain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly eventsPath: string,
    private readonly onFold: (s: LiveSession, events: LogEvent[]) => void,
    private readonly onError: (e: unknown) => void,
  ) {}

  async start(): Promise<void> {
    this.tail = new EventTail(this.eventsPath, (evs) => this.apply(evs), this.onError);
    await this.tail.start();
  }

  /** Reads the log now (used right after this process appended to it). */
  refresh(): Promise<void> {
    return this.tail?.poke() ?? Promise.resolve();
  }

  private apply(events: LogEvent[]): void {
    let f = this.fold;
    for (const e of events) f = reduce(f, e);
    this.fold = f;
    this.onFold(this, events);
    for (const l of [...this.listeners]) l(f, events);
  }

  /** Callers waiting on this session right now. */
  get listenerCount(): number {
    return this.listeners.size;
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /**
   * Resolves with the fold once `done(fold)` holds, or with `undefined` when the time is up.
   * `tick` runs every `tickMs` while waiting (progress notifications, fallback probes).
   */
  waitFor(
    done: (f: Folded) => boolean,
    opts: { timeoutMs: number; signal?: AbortSignal; tickMs?: number; tick?: (elapsedMs: number) => void | Promise<void> },
  ): Promise<Folded | undefined> {
    if (done(this.fold)) return Promise.resolve(this.fold);
    return new Promise((resolve, reject) => {
      const t0 = Date.now();
      let settled = false;
      const finish = (v: Folded | undefined, err?: unknown) => {
        if (settled) return;
        settled = true;
        unsub();
        clearTimeout(timer);
        if (ticker) clearInterval(ticker);
        opts.signal?.removeEventListener("abort", onAbort);
        if (err) reject(err);
        else resolve(v);
      };
      const unsub = this.subscribe((f) => {
        if (done(f)) finish(f);
      });
      const timer = setTimeout(() => finish(undefined), Math.max(0, opts.timeoutMs));
      const ticker =
        opts.tick && opts.tickMs
          ? setInterval(() => {
              void Promise.resolve(opts.tick?.(Date.now() - t0))
                .catch(() => {})
                .then(() => {
                  if (done(this.fold)) finish(this.fold);
                });
            }, opts.tickMs)
          : undefined;
      const onAbort = () => finish(undefined, new SessionError("CANCELLED", "the request was cancelled"));
      if (opts.signal?.aborted) onAbort();
      else opts.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  close(): void {
    this.tail?.close();
    this.listeners.clear();
  }
}
