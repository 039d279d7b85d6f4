/**
 * The session layer against an in-memory backend (tests/helpers/fake-backend.ts), lifecycle: list as a pure read,
 * released followers, and kills of sessions owned by another process — in milliseconds.
 */
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import type { SessionRecord } from "../../src/store/schema.js";
import { isAlive } from "../../src/util/proc/process.js";
import { FakeBackend } from "../helpers/fake-backend.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/wait.js";

const f = fakeService();

describe("session layer on a fake backend: lifecycle", () => {
  it("list is a pure read: a vanished terminal is shown dead, and recorded by the reconciler afterwards", async () => {
    const s = await f.svc.start(f.startIn());
    // The start's own batched write has reached state.json (the read below must be the only thing that could change it).
    await until(async () => (await f.store.read()).sessions[s.session_id]?.status === "ready", 5000, 10);
    f.fake.sessions.delete(s.session_id); // the terminal vanished without a word (tmux server killed)
    const before = readFileSync(join(f.root, "state", "state.json"), "utf8");
    const l = await f.svc.list(api.listInput.parse({}));
    expect(readFileSync(join(f.root, "state", "state.json"), "utf8")).toBe(before);
    expect(l.sessions.find((x) => x.session_id === s.session_id)?.status).toBe("dead");
    // Recorded in the background: soon, however loaded the machine (the unit tier runs files side by side).
    await until(async () => (await f.store.read()).sessions[s.session_id]!.status === "dead", 5000, 20);
  });

  it("a follower of an ended session is released (no watch kept per session ever seen)", async () => {
    const ids: string[] = [];
    ids.push(...(await Promise.all([0, 1, 2].map(() => f.svc.start(f.startIn())))).map((s) => s.session_id));
    expect(f.svc.followed).toBe(3);
    await Promise.all(ids.map((id) => f.svc.kill(api.killInput.parse({ session_id: id }))));
    // Released 30 ms after the end (releaseAfterMs in the fixture): soon, however loaded the machine.
    await until(async () => f.svc.followed === 0, 5000, 10);
    // Looked at again, it is followed again (its log replayed).
    expect((await f.svc.wait(api.waitInput.parse({ session_id: ids[0], timeout_ms: 10 }))).final_state).toBe("dead");
  });

  it("kill_session of a session whose exit status is recorded while its terminal still shows alive: already_dead, the status kept", async () => {
    const s = await f.svc.start(f.startIn());
    const fs = f.fake.sessions.get(s.session_id)!;
    const status = async () =>
      (await f.svc.list(api.listInput.parse({}))).sessions.find((x) => x.session_id === s.session_id)?.status;
    await until(async () => (await status()) === "ready", 5000, 20);
    // The launcher appends the program's exit before it exits itself (and tmux reaps it a moment later).
    appendFileSync(fs.spec.eventsPath, JSON.stringify({ hook_event_name: "cs:exit", exit_code: 3 }) + "\n");
    await until(async () => (await status()) === "dead", 5000, 20);
    expect(fs.alive).toBe(true);
    const k = await f.svc.kill(api.killInput.parse({ session_id: s.session_id }));
    expect(k).toMatchObject({ status: "already_dead", exit_code: 3 });
  });

  it("while kill_session ends a session, the SessionEnd it caused is listed as dead, not zombie", async () => {
    const s = await f.svc.start(f.startIn());
    f.fake.slowKillMs = 600;
    try {
      const kill = f.svc.kill(api.killInput.parse({ session_id: s.session_id }));
      const seen = new Set<string>();
      while (!(await Promise.race([kill.then(() => true), new Promise((r) => setTimeout(() => r(false), 20))]))) {
        const l = await f.svc.list(api.listInput.parse({}));
        seen.add(l.sessions.find((x) => x.session_id === s.session_id)?.status ?? "missing");
      }
      expect((await kill).status).toBe("killed");
      expect(seen.has("zombie"), [...seen].join(", ")).toBe(false);
      expect(seen.has("dead")).toBe(true);
    } finally {
      f.fake.slowKillMs = 0;
    }
  });

  it("kill reaches a pty session's process owned by another server process, and says so", async () => {
    await f.svc.close();
    const pty = new FakeBackend("pty", false);
    f.svc = await f.service(pty);
    const s = await f.svc.start(f.startIn());
    // As if another server process owned the terminal: a live owner, and the session's own process group.
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    // The owner records the exit when its process ends, as a pty backend does.
    child.on("exit", () =>
      appendFileSync(
        join(f.root, "state", s.session_id, "events.jsonl"),
        JSON.stringify({ hook_event_name: "cs:exit", exit_code: 143 }) + "\n",
      ),
    );
    await f.store.patch(s.session_id, (r) => {
      r.host = { owner_pid: process.ppid };
      r.pid = child.pid!;
    });
    pty.sessions.delete(s.session_id);
    const k = await f.svc.kill(api.killInput.parse({ session_id: s.session_id, force: true }));
    expect(k.status).toBe("killed");
    await until(() => !isAlive(child.pid!), 5000, 10);
    await until(async () => (await f.store.read()).sessions[s.session_id]!.status === "dead", 5000, 10);
  });

  it("a record whose session directory was never made (its server killed right after reserving it) is adopted as dead; start-up goes on", async () => {
    await f.store.update((st) => {
      const reserved: SessionRecord = {
        session_id: "reserved",
        claude_session_id: "00000000-0000-4000-8000-000000000001",
        backend: "tmux",
        status: "starting",
        created_at: new Date().toISOString(),
        cwd: f.root,
        command: "claude",
        args: [],
        env_names: [],
        turn_count: 0,
        error_log: [],
        messages_sent: 0,
        responses_received: 0,
        total_chars_sent: 0,
        total_chars_received: 0,
        options: {},
      };
      st.sessions.reserved = reserved;
    });
    const r = await f.svc.adopt();
    expect(r.dead).toContain("reserved");
    expect((await f.store.read()).sessions.reserved?.status).toBe("dead");
  });
  it("a session another server is starting (its terminal not made yet) is not marked dead at start-up; once its start time-out is past, it is", async () => {
    const s = await f.svc.start(f.startIn());
    await until(async () => (await f.store.read()).sessions[s.session_id]?.status === "ready", 5000, 10);
    await f.svc.close();
    // Another server wakes it: the record says starting at a new generation, cs:spawn is in its log, and the new
    // terminal does not exist yet (failed before: the starting server's session was marked dead by this start-up).
    f.fake.sessions.delete(s.session_id);
    const st = await f.store.read();
    const generation = (st.sessions[s.session_id]!.generation ?? 0) + 1;
    await f.store.patch(s.session_id, (r) => {
      r.status = "starting";
      r.generation = generation;
    });
    appendFileSync(
      join(f.root, "state", s.session_id, "events.jsonl"),
      "\n" + JSON.stringify({ hook_event_name: "cs:spawn", generation }) + "\n",
    );
    f.svc = await f.service(new FakeBackend());
    const t0 = Date.now();
    const r = await f.svc.adopt();
    expect(r.dead).not.toContain(s.session_id);
    expect((await f.store.read()).sessions[s.session_id]?.status).toBe("starting");
    // A start that never finished (its server died): recorded dead after the start time-out (3 s here) and a second.
    await until(async () => (await f.store.read()).sessions[s.session_id]?.status === "dead", 15_000, 50);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3_900);
  });
});
