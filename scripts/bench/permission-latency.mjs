/**
 * The timing loop the notify and webhooks phases share: one session of world `w` (server `m`) kept busy by a
 * `FAKE_SLOW:600000` turn of the fake claude; for each sample a hook process started exactly as Claude Code runs
 * one and held at its `paste` (lock taken, line about to be written), the clock started when a PermissionRequest
 * payload is handed over and stopped when what the phase watches arrives for that sample (`arrival`); a
 * PostToolUse line then puts the session back to busy. Returns the latencies in ms; the session is killed.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { appendViaHook, primedHook } from "./events.mjs";

/**
 * `arrival(sessionId, command)`: called before the sample's payload is written; resolves with performance.now()
 * when what the phase measures has arrived for it, and its `cancel()` forgets it.
 * `commandOf(i)`: the sample's Bash command (what tells the samples apart).
 */
export async function permissionLatency(w, m, { cwd, runs, label, arrival, commandOf = (i) => `echo sample-${i}` }) {
  const s = await m.must("start_session", { cwd });
  const id = s.session_id;
  const events = w.eventsPath(id);
  const common = {
    session_id: s.claude_session_id,
    transcript_path: `${w.home}/.claude/projects/x/${s.claude_session_id}.jsonl`,
    cwd,
    permission_mode: "default",
  };
  await m.must("send_message", { session_id: id, message: "FAKE_SLOW:600000 keep this session busy", wait_for_response: false });
  const lat = [];
  for (let i = 0; i < runs; i++) {
    const command = commandOf(i);
    const got = arrival(id, command);
    const hook = await primedHook(w.hookScript, events);
    const tA = performance.now();
    await hook.write({ ...common, hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: { command } });
    const tN = await Promise.race([got.at, sleep(5000).then(() => undefined)]);
    got.cancel();
    if (tN === undefined) throw new Error(`${label}: nothing arrived within 5 s for sample ${i}`);
    lat.push(tN - tA);
    await appendViaHook(w.hookScript, events, {
      ...common,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command },
      tool_response: { stdout: "" },
    });
    await sleep(20);
  }
  await m.call("kill_session", { session_id: id, force: true });
  return lat;
}
