/**
 * The warm pool (CLAUDE_SESSIONS_WARM_POOL=N): after a run_task on a runner that keeps spares (headless), N sessions
 * with the same backend, cwd and options are started and left ready, so the next run_task like it skips the start-up and only runs its turn.
 * They are ordinary sessions (list_sessions shows them, ready and idle; an idle CLI uses no API and no CPU) and
 * end with the server like every headless session. Calls with env or log_file never use the pool.
 */
import type { RunTaskInput, StartInput } from "../api/index.js";
import type { Deps } from "./deps.js";
import { start } from "./launch.js";

type Options = Omit<StartInput, "prompt">;

export class WarmPool {
  private readonly spare = new Map<string, string[]>();
  /** Spares still starting, per key: a call that finds none ready takes the next one to finish. */
  private readonly filling = new Map<string, Set<Promise<string | undefined>>>();

  constructor(
    private readonly d: Deps,
    private readonly size: number,
  ) {}

  /** The pool key of a call's start options, or undefined when the call may not use the pool. */
  static keyOf(input: RunTaskInput): { key: string; options: Options } | undefined {
    const { prompt: _p, timeout_ms: _t, keep_session: _k, ...options } = input;
    if (options.env || options.log_file || options.mcp_servers || options.doppler) return undefined;
    const sorted = Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)));
    return { key: JSON.stringify(sorted), options };
  }

  /**
   * A ready spare session for these options (taken out of the pool), if there is one — or, when one is still
   * starting, that one once it is ready (it is further along than a new start would be).
   */
  async take(key: string): Promise<string | undefined> {
    for (;;) {
      const ids = this.spare.get(key) ?? [];
      while (ids.length) {
        const id = ids.shift()!;
        if (this.d.registry.followed(id)?.fold.status === "ready") return id;
      }
      const starting = [...(this.filling.get(key) ?? [])];
      if (!starting.length) return undefined;
      await Promise.race(starting);
    }
  }

  /** A spare that ended is no longer one. */
  forget(id: string): void {
    for (const [key, ids] of this.spare) {
      const rest = ids.filter((x) => x !== id);
      if (rest.length) this.spare.set(key, rest);
      else this.spare.delete(key);
    }
  }

  /** Spares waiting, all keys (tests). */
  get spares(): number {
    let n = 0;
    for (const ids of this.spare.values()) n += ids.length;
    return n;
  }

  /** Starts spares in the background until `size` wait for these options (failures are logged, never thrown). */
  refill(key: string, options: Options): void {
    const starting = this.filling.get(key) ?? new Set<Promise<string | undefined>>();
    this.filling.set(key, starting);
    for (let i = (this.spare.get(key)?.length ?? 0) + starting.size; i < this.size; i++) {
      const p: Promise<string | undefined> = start(this.d, options, {})
        .then((s) => {
          this.spare.set(key, [...(this.spare.get(key) ?? []), s.session_id]);
          return s.session_id;
        })
        .catch((e: unknown) => {
          this.d.log.info(`warm pool: a spare session did not start: ${String(e)}`);
          return undefined;
        })
        .finally(() => starting.delete(p));
      starting.add(p);
    }
  }
}
