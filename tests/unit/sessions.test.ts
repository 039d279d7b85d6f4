/**
 * The session layer against an in-memory backend (tests/helpers/fake-backend.ts): start, turns, counters, limits,
 * list as a pure read, released followers and kills of sessions owned by another process — in milliseconds.
 */
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import { installScripts } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { SessionError } from "../../src/core/errors.js";
import { TerminalDriver } from "../../src/drivers/terminal/driver.js";
import { runner, SessionService } from "../../src/sessions/service.js";
import { Store } from "../../src/store/store.js";
import { createLogger } from "../../src/util/log.js";
import { isAlive } from "../../src/util/process.js";
import { FakeBackend } from "../helpers/fake-backend.js";
import { FAKE_CLAUDE } from "../helpers/harness.js";

let root: string;
let svc: SessionService;
let fake: FakeBackend;
let store: Store;

async function service(b: FakeBackend): Promise<SessionService> {
  const cfg = loadConfig({ CLAUDE_SESSIONS_DIR: join(root, "state"), CLAUDE_PATH: FAKE_CLAUDE, HOME: join(root, "home"), CLAUDE_SESSIONS_START_TIMEOUT_MS: "3000" });
  const log = createLogger({ level: "error" });
  store = new Store(cfg.stateDir, log);
  await store.read();
  const scripts = await installScripts(cfg.stateDir);
  return new SessionService({ cfg, store, log, scripts, runners: { [b.kind]: runner(b, new TerminalDriver(b, log)) }, releaseAfterMs: 30 });
}

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "cs-unit-"));
  fake = new FakeBackend();
  svc = await service(fake);
});
afterEach(async () => {
  await svc.close();
  rmSync(root, { recursive: true, force: true });
});

const startIn = (extra: Record<string, unknown> = {}) => api.startInput.parse({ cwd: root, ...extra });
const sendIn = (session_id: string, message: string) => api.sendInput.parse({ session_id, message, timeout_ms: 3000 });

describe("session layer on a fake backend", () => {
  it("starts, delivers a prompt in one Enter, and returns the reply; the backend got the exact argv", async () => {
    const s = await svc.start(startIn({ model: "sonnet;" }));
    expect(s).toMatchObject({ status: "ready", backend: "tmux", tmux_target: `cs-${s.session_id}` });
    const spec = fake.sessions.get(s.session_id)!.spec;
    expect(spec.argv).toEqual([FAKE_CLAUDE, `--session-id=${s.claude_session_id}`, `--settings=${join(root, "state", s.session_id, "settings.json")}`, "--model=sonnet;"]);
    expect(spec.cwd).toBe(root);
    const r = await svc.send(sendIn(s.session_id, "hello\r\nworld"));
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: hello\nworld", final_state: "idle" });
    expect(fake.sessions.get(s.session_id)!.keys.filter((k) => k === "Enter")).toHaveLength(1);
    expect(api.sendOutput.safeParse(r).success).toBe(true);
  });

  it("a prompt whose first Enter is not taken is delivered by a second one, never reported sent before", async () => {
    const s = await svc.start(startIn());
    fake.dropEnters = 1;
    const r = await svc.send(sendIn(s.session_id, "again"));
    expect(r.response).toBe("FAKE REPLY: again");
    expect(fake.sessions.get(s.session_id)!.prompts).toEqual(["again"]);
  });

  it("counts every turn's reply, also when the text repeats", async () => {
    fake.reply = () => "same";
    const s = await svc.start(startIn());
    for (const m of ["a", "b", "c"]) await svc.send(sendIn(s.session_id, m));
    await svc.list(api.listInput.parse({}));
    await new Promise((r) => setTimeout(r, 50));
    const rec = (await store.read()).sessions[s.session_id]!;
    expect(rec).toMatchObject({ responses_received: 3, total_chars_received: 12, messages_sent: 3, turn_count: 3 });
  });

  it("max_turns: the refusal says that resuming keeps the count", async () => {
    const s = await svc.start(startIn({ max_turns: 1 }));
    await svc.send(sendIn(s.session_id, "one"));
    const e = await svc.send(sendIn(s.session_id, "two")).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).code).toBe("LIMIT_REACHED");
    expect((e as SessionError).message).toContain("resuming keeps the count");
    expect((e as SessionError).suggestion).toMatch(/Start a new session/);
  });

  it("list is a pure read: a vanished terminal is shown dead, and recorded by the reconciler afterwards", async () => {
    const s = await svc.start(startIn());
    await new Promise((r) => setTimeout(r, 50));
    fake.sessions.delete(s.session_id); // the terminal vanished without a word (tmux server killed)
    const before = readFileSync(join(root, "state", "state.json"), "utf8");
    const l = await svc.list(api.listInput.parse({}));
    expect(readFileSync(join(root, "state", "state.json"), "utf8")).toBe(before);
    expect(l.sessions.find((x) => x.session_id === s.session_id)?.status).toBe("dead");
    // The reconciler records it in the background (within moments; a loaded machine may take longer than 200 ms).
    for (let t = Date.now(); Date.now() - t < 5_000 && (await store.read()).sessions[s.session_id]!.status !== "dead"; ) await new Promise((r) => setTimeout(r, 50));
    expect((await store.read()).sessions[s.session_id]!.status).toBe("dead");
  });

  it("a follower of an ended session is released (no watch kept per session ever seen)", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await svc.start(startIn())).session_id);
    expect(svc.followed).toBe(3);
    for (const id of ids) await svc.kill(api.killInput.parse({ session_id: id }));
    await new Promise((r) => setTimeout(r, 150));
    expect(svc.followed).toBe(0);
    // Looked at again, it is followed again (its log replayed).
    expect((await svc.wait(api.waitInput.parse({ session_id: ids[0], timeout_ms: 10 }))).final_state).toBe("dead");
  });

  it("kill reaches a pty session's process owned by another server process, and says so", async () => {
    await svc.close();
    const pty = new FakeBackend("pty", false);
    svc = await service(pty);
    const s = await svc.start(startIn());
    // As if another server process owned the terminal: a live owner, and the session's own process group.
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    // The owner records the exit when its process ends, as a pty backend does.
    child.on("exit", () => appendFileSync(join(root, "state", s.session_id, "events.jsonl"), JSON.stringify({ hook_event_name: "cs:exit", exit_code: 143 }) + "\n"));
    await store.patch(s.session_id, (r) => {
      r.owner_pid = process.ppid;
      r.pid = child.pid!;
    });
    pty.sessions.delete(s.session_id);
    const k = await svc.kill(api.killInput.parse({ session_id: s.session_id, force: true }));
    expect(k.status).toBe("killed");
    await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(child.pid!)).toBe(false);
    expect((await store.read()).sessions[s.session_id]!.status).toBe("dead");
  });
});
