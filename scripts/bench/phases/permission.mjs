/**
 * permission (issue #11, item 6): respond_permission → the tool's PostToolUse line in events.jsonl (the bench's
 * fs.watch), on tmux with the fake claude, through the permission channel (the blocking PermissionRequest hook
 * takes a decision file) vs the old path (CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS=0: the dialog's digit typed as a
 * key, after waiting for the dialog to be drawn and past its key guard). One session per path; each run sends
 * `FAKE_BASH:true`, waits for the request (untimed), answers allow (timed until PostToolUse), then waits for the
 * turn to end (untimed).
 */
import { EventWatcher } from "../events.mjs";
import { round, summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

async function measure(label, env, runs, log) {
  const w = makeWorld(`perm-${label}`, env);
  let m;
  let ew;
  try {
    m = await w.connect();
    const s = await m.must("start_session", { cwd: w.dir(label), backend: "tmux" });
    const id = s.session_id;
    ew = new EventWatcher(w.eventsPath(id));
    await ew.start();
    const lat = [];
    for (let i = 0; i < runs; i++) {
      const asked = await m.must("send_message", { session_id: id, message: `FAKE_BASH:true # ${label} ${i}` });
      if (asked.final_state !== "waiting_for_permission")
        throw new Error(`${label}: run ${i} did not ask for permission (${asked.final_state})`);
      const mark = ew.count;
      const t0 = performance.now();
      const post = ew.waitFor((e) => e.hook_event_name === "PostToolUse", { from: mark, timeoutMs: 20_000 });
      await m.must("respond_permission", { session_id: id, decision: "allow" });
      const rec = await post;
      if (!rec) throw new Error(`${label}: run ${i}: no PostToolUse within 20 s`);
      lat.push(rec.t - t0);
      await m.must("wait_for_completion", { session_id: id, timeout_ms: 20_000 });
    }
    if (log) log(`permission: ${label}: p50 ${round(summary(lat).p50)} ms over ${lat.length}`);
    return lat;
  } finally {
    ew?.close();
    await m?.close();
    w.cleanup();
  }
}

export async function permission(cfg, log) {
  const runs = cfg.permissionRuns ?? 10;
  const hook = await measure("hook", {}, runs, log);
  const keys = await measure("keys", { CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: "0" }, runs, log);
  const sh = summary(hook);
  const sk = summary(keys);
  return [
    {
      key: "permission_hook",
      figure: "respond_permission → PostToolUse, tmux, via the PermissionRequest hook",
      runs: hook.length,
      ...sh,
      notes: `vs ${round(sk.p50)} ms p50 by the dialog's keys`,
      target: "< keys path",
      result: sh.p50 < sk.p50 ? "ok" : "MISS",
      data: { hook_samples_ms: hook.map(round), keys_samples_ms: keys.map(round) },
    },
    {
      key: "permission_keys",
      figure: "respond_permission → PostToolUse, tmux, by the dialog's keys (hook off)",
      runs: keys.length,
      ...sk,
      notes: "the old path; now only the fallback",
      target: "reported",
      result: "info",
    },
  ];
}
