/**
 * Issue 33 with the fake claude on real tmux: a turn that hits a usage limit (the fake's FAKE_LIMIT, an API key's
 * 429 as CLI 2.1.332 reports it, while a file exists) makes the session `limited` within that turn (send_message: LIMITED with
 * resets_at), parks it (no process), refuses prompts until the reset, then wakes it and sends the interrupted
 * prompt again exactly once; 20 sessions limited at once are woken spaced by CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN;
 * a server killed with -9 while they wait wakes each of them once after it is started again; with
 * CLAUDE_SESSIONS_ON_LIMIT=fail the session keeps its process, is shown limited and nothing is resent.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAudit } from "../../src/store/audit.js";
import { connect, makeWorld, processesIn, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();

type Row = {
  session_id: string;
  status: string;
  limit?: { resets_at: string; limit_kind: string; reset_known: boolean; wake_at?: string };
};

async function rowOf(m: Mcp, id: string): Promise<Row | undefined> {
  return (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id) as Row | undefined;
}

/** The events of a session's log. */
function events(w: World, id: string): Array<Record<string, unknown>> {
  return readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** How many turns answered `prompt` (a Stop whose reply is the fake's answer to it). */
function answers(w: World, id: string, prompt: string): number {
  return events(w, id).filter((e) => e.hook_event_name === "Stop" && e.last_assistant_message === `FAKE REPLY: ${prompt}`).length;
}

/** When the session's prompt was last taken again after its limit: the last user line of `prompt` in its transcript. */
function resentAt(w: World, cwd: string, prompt: string): number | undefined {
  const dir = join(w.home, ".claude", "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
  const lines = readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type?: string; timestamp?: string; message?: { content?: unknown } })
    .filter((l) => l.type === "user" && l.message?.content === prompt);
  const last = lines[lines.length - 1];
  return lines.length >= 2 && last?.timestamp ? Date.parse(last.timestamp) : undefined;
}

describe.runIf(HAS_TMUX)("usage limits: limited, parked, woken once (issue 33)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld({
      CLAUDE_SESSIONS_IDLE_TTL_MS: "0",
      CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "4000",
      CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
      CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "600",
      MAX_CONCURRENT_SESSIONS: "30",
    });
  });
  afterAll(() => w?.cleanup());

  it("a limit within one turn: LIMITED with resets_at, shown limited, parked, refused until the reset, then answered exactly once", async () => {
    const m = await connect(w);
    const notes: Array<Record<string, unknown>> = [];
    m.client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void notes.push(n.params.data as Record<string, unknown>),
    );
    try {
      const cwd = w.dir("one");
      const s = await m.callOk("start_session", { cwd });
      const gate = join(w.root, "limit-one");
      writeFileSync(gate, "");
      const prompt = `job one FAKE_LIMIT:${gate}`;
      const t0 = Date.now();
      const r = await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 });
      expect(r.error?.code, r.text).toBe("LIMITED");
      expect(r.error?.retryable).toBe(true);
      const details = r.error?.details as { resets_at: string; limit_kind: string; message_sent: boolean };
      expect(details.limit_kind).toBe("rate");
      expect(details.message_sent).toBe(true);
      expect(Date.parse(details.resets_at)).toBeGreaterThan(t0);
      // Shown limited, with the operator's wait (the CLI gave no reset time), and parked: no process.
      await until(async () => (await rowOf(m, s.session_id))?.limit?.wake_at !== undefined, 10_000);
      const row = (await rowOf(m, s.session_id))!;
      expect(row.status).toBe("limited");
      expect(row.limit).toMatchObject({ limit_kind: "rate", reset_known: false });
      // Every client hears it: a "limited" notice with the reset and the wake.
      await until(() => notes.some((n) => n.event === "limited" && n.session_id === s.session_id), 10_000);
      expect(notes.find((n) => n.event === "limited")).toMatchObject({
        status: "limited",
        limit_kind: "rate",
        resets_at: row.limit!.resets_at,
        wake_at: row.limit!.wake_at,
      });
      await until(() => processesIn(cwd).length === 0, 10_000);
      // A prompt before the reset is refused and changes nothing.
      const early = await m.call("send_message", { session_id: s.session_id, message: "too early" });
      expect(early.error?.code).toBe("LIMITED");
      expect((early.error?.details as { message_sent: boolean }).message_sent).toBe(false);
      const waited = await m.call("wait_for_completion", { session_id: s.session_id, timeout_ms: 2000 });
      expect(waited.error?.code).toBe("LIMITED");
      expect(processesIn(cwd)).toEqual([]);
      // The account has room again: the server wakes it after the wait and the prompt is answered, once (a wake
      // that came while the limit still held went back to limited and was woken again).
      rmSync(gate);
      await until(() => answers(w, s.session_id, prompt) === 1, 40_000);
      await until(async () => (await rowOf(m, s.session_id))?.status === "idle", 10_000);
      expect((await rowOf(m, s.session_id))?.limit).toBeUndefined();
      expect(events(w, s.session_id).filter((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === "too early")).toEqual(
        [],
      );
      // Nothing more is sent later.
      await new Promise((res) => setTimeout(res, 3000));
      expect(answers(w, s.session_id, prompt)).toBe(1);
      expect(
        events(w, s.session_id).filter((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === prompt).length,
      ).toBeGreaterThanOrEqual(2);
      // The server's own acts are audited: the parking and the resend.
      const audit = (await readAudit(w.stateDir)).filter(
        (a) => a.session_id === s.session_id && a.actor === "server:usage_limit",
      );
      expect(audit.map((a) => a.tool)).toEqual(expect.arrayContaining(["kill_session", "send_message"]));
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  }, 120_000);

  it("a limit on a prompt the transcript shows late: the park waits for its line, and the wake resumes the conversation", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("late");
      const s = await m.callOk("start_session", { cwd });
      const gate = join(w.root, "limit-late");
      writeFileSync(gate, "");
      // The 429 ends the turn at once; the prompt's transcript line comes 800 ms later. A process ended before that
      // leaves no conversation to resume ("No conversation found"), and the prompt would never be answered.
      const prompt = `job late FAKE_TRANSCRIPT_LATE:800 FAKE_LIMIT:${gate}`;
      const r = await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 });
      expect(r.error?.code, r.text).toBe("LIMITED");
      await until(async () => (await rowOf(m, s.session_id))?.limit?.wake_at !== undefined, 10_000);
      await until(() => processesIn(cwd).length === 0, 10_000);
      rmSync(gate);
      await until(() => answers(w, s.session_id, prompt) === 1, 40_000);
      await until(async () => (await rowOf(m, s.session_id))?.status === "idle", 10_000);
      expect(events(w, s.session_id).some((e) => e.hook_event_name === "cs:start_failed")).toBe(false);
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  }, 120_000);

  it("a parked session ended by kill_session is not woken when its limit lifts", async () => {
    const m = await connect(w);
    try {
      const cwd = w.dir("killed");
      const s = await m.callOk("start_session", { cwd });
      const gate = join(w.root, "limit-killed");
      writeFileSync(gate, "");
      const prompt = `job killed FAKE_LIMIT:${gate}`;
      expect((await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 })).error?.code).toBe(
        "LIMITED",
      );
      await until(async () => (await rowOf(m, s.session_id))?.limit?.wake_at !== undefined, 10_000);
      const wakeAt = Date.parse((await rowOf(m, s.session_id))!.limit!.wake_at!);
      await until(() => processesIn(cwd).length === 0, 10_000);
      await m.callOk("kill_session", { session_id: s.session_id });
      rmSync(gate);
      await new Promise((res) => setTimeout(res, Math.max(0, wakeAt - Date.now()) + 3000));
      expect(events(w, s.session_id).filter((e) => e.hook_event_name === "UserPromptSubmit" && e.prompt === prompt)).toHaveLength(
        1,
      );
      expect((await rowOf(m, s.session_id))?.status).toBe("dead");
      expect(processesIn(cwd)).toEqual([]);
    } finally {
      await m.close();
    }
  }, 120_000);

  it("CLAUDE_SESSIONS_ON_LIMIT=fail: shown limited with its process kept, prompts refused until the reset, nothing resent", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_ON_LIMIT: "fail", CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "3000" });
    try {
      const cwd = w.dir("fail");
      const s = await m.callOk("start_session", { cwd });
      const gate = join(w.root, "limit-fail");
      writeFileSync(gate, "");
      const prompt = `job fail FAKE_LIMIT:${gate}`;
      const r = await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 });
      expect(r.error?.code, r.text).toBe("LIMITED");
      await until(async () => (await rowOf(m, s.session_id))?.status === "limited", 10_000);
      const row = (await rowOf(m, s.session_id))!;
      expect(row.limit?.wake_at).toBeUndefined();
      expect(processesIn(cwd).length).toBeGreaterThan(0);
      expect((await m.call("send_message", { session_id: s.session_id, message: "too early" })).error?.code).toBe("LIMITED");
      rmSync(gate);
      // After the reset nothing is resent by the server; the caller's own prompt goes through.
      const left = Date.parse(row.limit!.resets_at) + 1500 - Date.now();
      expect(left, JSON.stringify(row)).toBeLessThan(10_000);
      await new Promise((res) => setTimeout(res, Math.max(0, left)));
      expect(answers(w, s.session_id, prompt)).toBe(0);
      const pending = join(w.stateDir, "limit-wakes", "pending");
      expect(existsSync(pending) ? readdirSync(pending).filter((f) => f.startsWith(`${s.session_id}.`)) : []).toEqual([]);
      const again = await m.callOk("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 });
      expect(again).toMatchObject({ completed: true, response: `FAKE REPLY: ${prompt}` });
      expect((await rowOf(m, s.session_id))?.status).toBe("idle");
      await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  }, 120_000);

  it("on_limit per session (start_session): wait parks it on a server whose default is fail; the default keeps its process; a bad value is refused", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_ON_LIMIT: "fail", CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "60000" });
    try {
      const bad = await m.callRaw("start_session", { cwd: w.dir("own-bad"), on_limit: "later" });
      expect(bad.error?.code, bad.text).toBe("INVALID_ARGUMENT");
      const waitCwd = w.dir("own-wait");
      const failCwd = w.dir("own-default");
      const a = await m.callOk("start_session", { cwd: waitCwd, on_limit: "wait" });
      const b = await m.callOk("start_session", { cwd: failCwd });
      const gate = join(w.root, "limit-own");
      writeFileSync(gate, "");
      for (const s of [a, b]) {
        const r = await m.call("send_message", { session_id: s.session_id, message: `own ${s.session_id} FAKE_LIMIT:${gate}` });
        expect(r.error?.code, r.text).toBe("LIMITED");
      }
      // on_limit wait: parked (a wake is due, no process); the server's fail: shown limited with its process kept.
      await until(async () => (await rowOf(m, a.session_id))?.limit?.wake_at !== undefined, 15_000);
      await until(() => processesIn(waitCwd).length === 0, 15_000);
      const rb = (await rowOf(m, b.session_id))!;
      expect(rb).toMatchObject({ status: "limited" });
      expect(rb.limit?.wake_at).toBeUndefined();
      expect(processesIn(failCwd).length).toBeGreaterThan(0);
      rmSync(gate);
      for (const s of [a, b]) await m.callOk("kill_session", { session_id: s.session_id });
    } finally {
      await m.close();
    }
  }, 120_000);

  it("20 sessions limited at once are woken spaced by the operator's rate; a server killed -9 while they wait wakes each once after a restart", async () => {
    // Waited out 20 s from each turn's end: the server is killed before the first wake.
    const m1 = await connect(w, { CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "120", CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "20000" });
    const gate = join(w.root, "limit-fleet");
    writeFileSync(gate, "");
    const ids: string[] = [];
    const prompts = new Map<string, string>();
    try {
      const started = await Promise.all(
        Array.from({ length: 20 }, (_, i) => m1.callOk("start_session", { cwd: w.dir(`fleet-${i}`) })),
      );
      await Promise.all(
        started.map(async (s, i) => {
          const prompt = `fleet ${i} FAKE_LIMIT:${gate}`;
          prompts.set(s.session_id, prompt);
          ids.push(s.session_id);
          const r = await m1.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 60_000 });
          expect(r.error?.code, r.text).toBe("LIMITED");
        }),
      );
      // Every one parked, then the server dies hard before any reset.
      await until(async () => {
        const rows = (await m1.callOk("list_sessions", {})).sessions as Row[];
        return ids.every(
          (id) =>
            rows.find((x) => x.session_id === id)?.status === "limited" && rows.find((x) => x.session_id === id)?.limit?.wake_at,
        );
      }, 60_000);
      await until(() => ids.every((_, i) => processesIn(w.dir(`fleet-${i}`)).length === 0), 30_000);
      // Parked one at a time (park.ts): the 20 hibernations (server:usage_limit) never overlap. Ended together, they
      // held up the state lock and the LIMITED replies for 10-20 s (docs/performance.md).
      const parked = async () =>
        (await readAudit(w.stateDir)).filter(
          (l) => l.actor === "server:usage_limit" && l.tool === "kill_session" && ids.includes(l.session_id ?? ""),
        );
      await until(async () => (await parked()).length >= 20, 15_000);
      const spans = (await parked())
        .map((l) => [Date.parse(l.time), Date.parse(l.time) + l.duration_ms] as const)
        .sort((x, y) => x[0] - y[0]);
      for (let k = 1; k < spans.length; k++)
        expect(spans[k]![0], `hibernation ${k} began before ${k - 1} ended`).toBeGreaterThanOrEqual(spans[k - 1]![1] - 2);
      process.kill(m1.pid!, "SIGKILL");
      rmSync(gate);
    } finally {
      await m1.close().catch(() => {});
    }
    // Two servers on the state dir from now on: each limit is still woken once.
    const a = await connect(w, { CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "120" });
    const b = await connect(w, { CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: "120" });
    try {
      await until(() => ids.every((id) => answers(w, id, prompts.get(id)!) >= 1), 120_000, 500);
      // Spaced: 60 s / 120 = 500 ms between wakes (one slot each, across both servers).
      const times = ids.map((id, i) => resentAt(w, w.dir(`fleet-${i}`), prompts.get(id)!)!).sort((x, y) => x - y);
      expect(times.every((t) => Number.isFinite(t))).toBe(true);
      const span = times[times.length - 1]! - times[0]!;
      expect(span).toBeGreaterThanOrEqual(19 * 500 - 600);
      const slots = readdirSync(join(w.stateDir, "limit-wakes", "slots")).filter((n) => /^\d+$/.test(n));
      expect(new Set(slots).size).toBe(slots.length);
      expect(readdirSync(join(w.stateDir, "limit-wakes", "claimed")).length).toBeGreaterThanOrEqual(20);
      // None of theirs left pending (another test's parked-then-killed session may still have one due later).
      expect(
        readdirSync(join(w.stateDir, "limit-wakes", "pending")).filter((n) => ids.some((id) => n.startsWith(`${id}.`))),
      ).toEqual([]);
      // Once each, and nothing more later.
      await new Promise((res) => setTimeout(res, 3000));
      for (const id of ids) expect(answers(w, id, prompts.get(id)!), id).toBe(1);
      for (const id of ids) expect(statSync(join(w.stateDir, id, "events.jsonl")).size).toBeGreaterThan(0);
      console.log(`[usage-limits] 20 wakes spread over ${span} ms at 120/min`);
      await Promise.all(ids.map((id) => a.callOk("kill_session", { session_id: id })));
    } finally {
      await a.close();
      await b.close();
    }
  }, 300_000);
});
