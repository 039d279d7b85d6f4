/**
 * The warm pool (CLAUDE_SESSIONS_WARM_POOL=N): after a run_task or start_session, N sessions with the same cwd,
 * backend and options are started and left ready (spares), so the next call like it skips the start-up and only
 * delivers its first prompt. A spare's record says so (`spare`: its pool key; list_sessions shows `spare: true`)
 * until a call takes it, under the state lock (two servers never take one spare); it then is the caller's session.
 * A spare is never a team member or in a worktree: calls with a chosen session_id, team_name, worktree (setup_command,
 * copy_files), env, log_file, mcp_servers, doppler or another node never use the pool. Spares end with the server
 * as their backend's sessions do (a tmux spare is adopted by the next server, still a spare that server can take).
 */
import type { RunTaskInput, StartInput, StartOutput } from "../../api/index.js";
import type { CallContext } from "../../core/context.js";
import type { BackendKind } from "../../core/events.js";
import { isLive } from "../../core/status.js";
import { settleTurn } from "../spend/cost.js";
import { checkPrompt } from "../checks.js";
import { assertStartInRoots } from "./roots.js";
import { hasRoom } from "../life/room.js";
import type { Deps } from "../deps.js";
import { result, start, withStream } from "./launch.js";
import { deliverPrompt } from "../turn/keys.js";
import { sandboxKey } from "./sandbox.js";

type Options = Omit<StartInput, "prompt">;

/** The server's pool, for a backend whose runner keeps spares (undefined when CLAUDE_SESSIONS_WARM_POOL is 0). */
export function poolOf(d: Deps, backend: BackendKind): WarmPool | undefined {
  if (!d.cfg.warmPool || !d.runners[backend]?.caps.warmPool) return undefined;
  return (d.pool ??= new WarmPool(d, d.cfg.warmPool));
}

/** Options no spare can have been started with: a call with any of them starts its own session. */
const NEVER_POOLED = [
  "session_id",
  "team_name",
  "teammate_name",
  "worktree",
  "setup_command",
  "copy_files",
  "env",
  "log_file",
  "mcp_servers",
  "doppler",
  "doppler_project",
  "doppler_config",
] as const;

export class WarmPool {
  /** Spares still starting, per key: a call that finds none ready takes the next one to finish. */
  private readonly filling = new Map<string, Set<Promise<string | undefined>>>();

  constructor(
    private readonly d: Deps,
    private readonly size: number,
  ) {}

  /** The pool key of a call's start options (backend resolved), or undefined when the call may not use the pool. */
  static keyOf(input: StartInput | RunTaskInput): { key: string; options: Options } | undefined {
    // The call's idempotency_key is not an option of the session (issue 31): keyed calls share the spares.
    const {
      prompt: _p,
      stream_output: _s,
      idempotency_key: _i,
      node,
      ...rest
    } = input as StartInput & { timeout_ms?: number; keep_session?: boolean };
    const { timeout_ms: _t, keep_session: _k, ...options } = rest;
    if (node !== undefined && node !== "local") return undefined;
    if (NEVER_POOLED.some((k) => (options as Record<string, unknown>)[k] !== undefined)) return undefined;
    const sorted = Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)));
    return { key: JSON.stringify(sorted), options };
  }

  // Nothing per session is kept here: a spare's membership is its record's `spare` (the pool's maps are by key).

  /** Spares this server is starting right now (the ready ones are records in the store): its footprint. */
  get spares(): number {
    let n = 0;
    for (const s of this.filling.values()) n += s.size;
    return n;
  }

  /** The ids of this key's spares in the store, oldest first. */
  private async sparesOf(key: string): Promise<string[]> {
    const s = await this.d.store.read();
    return Object.values(s.sessions)
      .filter((r) => r.spare === key)
      .sort((a, b) => a.created_at.localeCompare(b.created_at))
      .map((r) => r.session_id);
  }

  /** Takes the spare out of the pool under the lock: true when this call got it (no other call or server did). */
  private claim(id: string, key: string): Promise<boolean> {
    return this.d.store.update((s) => {
      const r = s.sessions[id];
      if (r?.spare !== key) return false;
      delete r.spare;
      return true;
    });
  }

  /**
   * A ready spare session for these options (taken out of the pool), if there is one — or, when one is still
   * starting, that one once it is ready (it is further along than a new start would be).
   */
  async take(key: string): Promise<string | undefined> {
    for (;;) {
      for (const id of await this.sparesOf(key)) {
        if (this.d.registry.followed(id)?.fold.status === "ready" && (await this.claim(id, key))) return id;
      }
      const starting = [...(this.filling.get(key) ?? [])];
      if (!starting.length) return undefined;
      await Promise.race(starting);
    }
  }

  /** Starts spares in the background until `size` wait for these options (failures are logged, never thrown). */
  refill(key: string, options: Options): void {
    const fill = async (): Promise<void> => {
      // The spares of this key that are still live (a spare that died is no spare: it leaves the pool).
      let have = 0;
      for (const id of await this.sparesOf(key)) {
        const st = this.d.registry.followed(id)?.fold.status;
        if (st === "ready" || st === "starting") have++;
        else await this.d.store.patch(id, (r) => void delete r.spare);
      }
      const starting = this.filling.get(key) ?? new Set<Promise<string | undefined>>();
      for (let i = have + starting.size; i < this.size; i++) {
        // Under CLAUDE_SESSIONS_MAX_LIVE a spare takes only free room: it never makes a session hibernate.
        if (!(await hasRoom(this.d, this.spares))) {
          this.d.log.info(`warm pool: no spare started: CLAUDE_SESSIONS_MAX_LIVE (${this.d.cfg.maxLive}) has no free room`);
          break;
        }
        this.filling.set(key, starting);
        const p: Promise<string | undefined> = start(this.d, options, {})
          .then(async (s) => {
            await this.d.store.patch(s.session_id, (r) => void (r.spare = key));
            return s.session_id;
          })
          .catch((e: unknown) => {
            this.d.log.info(`warm pool: a spare session did not start: ${String(e)}`);
            return undefined;
          })
          .finally(() => {
            starting.delete(p);
            if (!starting.size && this.filling.get(key) === starting) this.filling.delete(key);
          });
        starting.add(p);
      }
    };
    void fill().catch((e: unknown) => this.d.log.info(`warm pool: refill: ${String(e)}`));
  }
}

/**
 * start_session through the pool: a ready spare with the same options takes the call's first prompt (in the
 * spare's process) and becomes the caller's session; otherwise an ordinary start. Either way the pool is refilled
 * once the session's first turn has ended (as run_task does: a spare starting beside the turn would slow it down),
 * or after REFILL_AFTER_MS when no turn comes.
 */
export async function startPooled(d: Deps, input: StartInput, ctx: CallContext): Promise<StartOutput> {
  const backend = input.backend ?? d.defaultKind;
  const pool = poolOf(d, backend);
  const pooled = pool ? WarmPool.keyOf({ ...input, backend, sandbox: sandboxKey(d.cfg, input.sandbox) }) : undefined;
  // A start under an account is never a spare's (spares run under the server's own login), nor one with its own on_limit.
  if (!pool || !pooled || input.account !== undefined || input.on_limit !== undefined) return start(d, input, ctx);
  const prompt =
    input.prompt !== undefined ? checkPrompt(d.cfg, input.prompt, "prompt", false, d.runners[backend]?.caps) : undefined;
  // A spare was made for this cwd without a caller: the caller's roots are checked before it is handed out.
  await assertStartInRoots(d.cfg, ctx, input);
  const id = await pool.take(pooled.key);
  let out: StartOutput | undefined;
  try {
    if (!id) return (out = await start(d, input, ctx));
    ctx.progress?.({ progress: 0, message: `session ${id} taken ready from the warm pool` });
    if (prompt !== undefined) await deliverPrompt(d, id, prompt, ctx);
    return (out = withStream(await result(d, id), input));
  } finally {
    const refill = () => pool.refill(pooled.key, pooled.options);
    const sid = id ?? out?.session_id;
    if (!sid) refill();
    else
      void d.registry
        .handle(sid)
        .then(async (s) => {
          const f = await s.live.waitFor(
            (x) => x.turn_count >= 1 || !isLive(x.status) || x.status === "waiting_for_permission" || x.status === "blocked",
            { timeoutMs: REFILL_AFTER_MS },
          );
          // The turn's figures are read from the transcript Claude writes 70–100 ms after Stop: the caller's
          // result waits for them, so the spare's start-up waits too.
          if (f && f.turn_count >= 1) await settleTurn(d, sid, 1, f);
        })
        .catch(() => undefined)
        .then(refill);
  }
}

/** A session taken or started through the pool that gets no prompt: the pool refills after this long anyway. */
const REFILL_AFTER_MS = 60_000;
