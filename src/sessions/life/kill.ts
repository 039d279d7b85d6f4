/** kill_session: end the process (wherever it runs), record it dead and resumable, or forget it. */
import { rm } from "node:fs/promises";
import type { KillInput, KillOutput, Resolved } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { isLive } from "../../core/status.js";
import { isAlive, terminate } from "../../util/proc/process.js";
import type { Deps } from "../deps.js";
import { generationOf } from "../registry.js";
import { applyFold } from "../views.js";

export async function kill(d: Deps, input: Resolved<KillInput>, reason?: string): Promise<KillOutput> {
  const killed_at = new Date().toISOString();
  const r = await d.store.get(input.session_id);
  if (!r) return { session_id: input.session_id, status: "not_found", state_saved: false, killed_at };
  const id = r.session_id;
  const b = d.runners[r.backend]?.host;
  const x = await d.registry.open(id);
  const s = x.live;
  let status: "killed" | "already_dead" = "already_dead";
  let exitCode: number | undefined = s.fold.exit_code;
  let left: number[] = [];
  // force: SIGKILL of the process group at once (the design's "SIGKILL instead of SIGTERM"); else TERM, then KILL after the grace.
  const graceMs = input.force ? 0 : d.cfg.killGraceMs;
  // An exit status recorded means the program is gone (list_sessions says dead, not zombie): a terminal still alive
  // is the launcher finishing its last line (or tmux yet to reap it), ended below but not a kill of the session.
  const over = !isLive(s.fold.status) && s.fold.exit_code !== undefined;
  x.killing = true;
  try {
    if (b) {
      const here = (await b.list()).get(id);
      if (here?.alive) {
        const res = await b.kill(id, { graceMs, ...(r.pid ? { pid: r.pid } : {}) });
        if (!over) status = "killed";
        left = res.left ?? [];
        if (left.length) d.log.warn(`${id}: processes of the session still running after kill: ${left.join(", ")}`);
        if (res.exitCode !== undefined && !over) exitCode = res.exitCode;
      } else if (!b.owns(r.host) && isLive(s.fold.status) && r.pid !== undefined && isAlive(r.pid)) {
        // A pty session of another server process (a second MCP server, the CLI): its terminal is there, but its
        // process can be reached by pid. That server sees the exit and records it.
        const res = await terminate(r.pid, graceMs);
        if (!res.gone) {
          const owner = r.host?.owner_pid;
          throw new SessionError(
            "PROCESS_ERROR",
            `session ${id} runs in a pty of server process ${owner}, and its process ${r.pid} did not end.`,
            {
              suggestion: `Stop that server (pid ${owner}), which ends its pty sessions, or kill process ${r.pid} yourself.`,
              details: { owner_pid: owner, pid: r.pid },
            },
          );
        }
        status = "killed";
        await s.waitFor((f) => !isLive(f.status), { timeoutMs: 2000 });
      }
      await b.remove(id).catch(() => {});
    }
  } finally {
    x.killing = false;
  }
  d.registry.session(id)?.clearDeadline();
  if (isLive(s.fold.status))
    await d.registry.emit(id, {
      hook_event_name: "cs:exit",
      ...(exitCode !== undefined ? { exit_code: exitCode } : {}),
      ...generationOf(s.fold),
    });
  // A hibernated session has no process: only this says it is over (a late exit of its old process does not).
  else if (s.fold.status === "hibernated")
    await d.registry.emit(id, { hook_event_name: "cs:exit", reason: "kill", ...generationOf(s.fold) });
  await d.registry.flushed();
  const save = input.save_state !== false;
  if (save) {
    await d.store.patch(id, (rec) => {
      applyFold(rec, s.fold);
      rec.status = "dead";
      rec.killed_at = killed_at;
      delete rec.pid;
      if (exitCode !== undefined) rec.exit_code = exitCode;
      if (reason) rec.error_log = [...rec.error_log, `${killed_at} ended: ${reason}`].slice(-20);
    });
  } else {
    await d.store.update((st) => {
      delete st.sessions[id];
    });
    d.registry.drop(id);
    await rm(d.registry.paths(id).dir, { recursive: true, force: true });
  }
  const out: KillOutput = { session_id: id, status, state_saved: save, killed_at };
  if (exitCode !== undefined) out.exit_code = exitCode;
  if (left.length) out.left_running = left;
  return out;
}
