/**
 * Issue 37 item 2: webhooks out. The built server over stdio with CLAUDE_SESSIONS_WEBHOOKS naming loopback
 * receivers; run_task on a headless session of the fake claude ends a turn. The receivers verify the Stripe-style
 * HMAC; a receiver failing 3 times then answering gets the event once (four tries of one delivery id); one that never
 * answers ends in the dead letter without delaying the others; `claude-sessions webhooks` lists and replays it.
 * A bad webhooks file (mode, non-loopback http, missing secret variable) stops the server with the reason.
 */
import { spawn } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, until, type World } from "../helpers/harness.js";
import { startReceiver, verified, type Receiver } from "../helpers/receiver.js";

const SECRET = "whsec-test-0123456789abcdef";
const PROMPT = "a task whose text must not leave";

function writeHooks(w: World, endpoints: unknown[], mode = 0o600): string {
  const f = join(w.root, `webhooks-${Math.random().toString(36).slice(2, 8)}.json`);
  writeFileSync(f, JSON.stringify({ endpoints }), { mode });
  return f;
}

/** The CLI, run without blocking this process (the receivers live in it). */
async function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string }> {
  const p = spawn(process.execPath, [CLI, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  p.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  const status = await new Promise<number | null>((res) => p.on("exit", (c) => res(c)));
  return { status, stdout };
}

/** Starts `serve` with the file and returns its exit code and stderr (a bad file stops it at once). */
async function serveFails(w: World, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const p = spawn(process.execPath, [CLI, "serve"], { env: { ...w.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  p.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((res) => p.on("exit", (c) => res(c)));
  return { code, stderr };
}

describe("webhooks out", () => {
  let w: World;
  let good: Receiver;
  let flaky: Receiver;
  let hung: Receiver;
  let file: string;

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    good = await startReceiver();
    flaky = await startReceiver((n) => (n < 3 ? 500 : 200));
    hung = await startReceiver(() => "hang");
    file = writeHooks(w, [
      { url: good.url, events: ["turn.ended", "session.died"], secret: SECRET },
      {
        url: flaky.url,
        events: ["turn.ended"],
        secret: { env: "FLAKY_SECRET" },
        include_text: true,
        retry: { attempts: 5, base_ms: 50, max_ms: 200 },
      },
      {
        url: hung.url,
        events: ["turn.ended"],
        secret: SECRET,
        timeout_ms: 1500,
        retry: { attempts: 2, base_ms: 50, max_ms: 100 },
      },
    ]);
  });
  afterAll(async () => {
    for (const r of [good, flaky, hung]) await r?.close();
    w?.cleanup();
  });

  it("delivers turn.ended signed, retries a failing receiver to one success, dead-letters one that never answers without delaying the others", async () => {
    const m = await connect(w, { CLAUDE_SESSIONS_WEBHOOKS: file, FLAKY_SECRET: "flaky-secret-0123456789" });
    try {
      const t = await m.callOk("run_task", { cwd: w.dir("hooks"), prompt: PROMPT });
      await until(() => good.got.length >= 1 && flaky.got.length >= 4 && hung.got.length >= 1, 30_000);
      const g = good.got[0]!;
      expect(g.json).toMatchObject({ event: "turn.ended", session_id: t.session_id, status: "idle", turn_outcome: "completed" });
      expect(g.headers["x-claude-sessions-event"]).toBe("turn.ended");
      expect(verified(SECRET, g)).toBe(true);
      expect(verified("another-secret-0123456789", g)).toBe(false);
      // Neither the prompt nor the reply without include_text; no secret anywhere.
      expect(g.body).not.toContain(PROMPT);
      expect(g.json).not.toHaveProperty("response");
      expect(g.body).not.toContain(SECRET);
      // The hung receiver holds its first request for 1.5 s: the good one had its delivery before that ended.
      expect(g.at).toBeLessThan(hung.got[0]!.at + 1_500);

      // Failing three times, then answering: four tries of one delivery, each signed, accepted once.
      const ids = new Set(flaky.got.map((r) => r.json.id));
      expect(flaky.got).toHaveLength(4);
      expect(ids.size).toBe(1);
      expect(flaky.got.every((r) => verified("flaky-secret-0123456789", r))).toBe(true);
      // include_text: this endpoint asked for the reply's text.
      expect(flaky.got[3]!.json).toHaveProperty("response");

      // Never answering: two tries, then the dead letter (0600), which the CLI lists.
      const dead = join(w.stateDir, "webhooks", "dead-letter.jsonl");
      await until(() => {
        try {
          return readFileSync(dead, "utf8").trim().length > 0;
        } catch {
          return false;
        }
      }, 30_000);
      expect(statSync(dead).mode & 0o777).toBe(0o600);
      const entries = readFileSync(dead, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ event: "turn.ended", attempts: 2, origin: new URL(hung.url).origin });
      expect(hung.got).toHaveLength(2);
      expect(good.got.filter((r) => r.json.event === "turn.ended")).toHaveLength(1);
      await m.callOk("kill_session", { session_id: t.session_id });
      await until(() => good.got.some((r) => r.json.event === "session.died"), 30_000);
    } finally {
      await m.close();
    }

    const env = { ...w.env, CLAUDE_SESSIONS_WEBHOOKS: file, FLAKY_SECRET: "flaky-secret-0123456789" };
    const listed = await cli(["webhooks"], env);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain("dead letter: 1 delivery");
    expect(listed.stdout).not.toContain(SECRET);
    const id = /^ {2}(\S+:\S+)\s+turn\.ended/m.exec(listed.stdout)?.[1];
    expect(id).toBeTruthy();
    // The receiver is back: the replay delivers it (signed anew) and empties the dead letter.
    hung.answer = () => 204;
    const before = hung.got.length;
    const replay = await cli(["webhooks", "replay", "--all"], env);
    expect(replay.stdout).toMatch(/: delivered$/m);
    expect(replay.status).toBe(0);
    expect(hung.got.length).toBe(before + 1);
    expect(verified(SECRET, hung.got.at(-1)!)).toBe(true);
    expect(readFileSync(join(w.stateDir, "webhooks", "dead-letter.jsonl"), "utf8").trim()).toBe("");
  }, 120_000);

  it("a server stopping with a delivery in flight to a receiver that never answers exits at once and dead-letters it", async () => {
    const w2 = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    const stuck = await startReceiver(() => "hang");
    try {
      const f = writeHooks(w2, [{ url: stuck.url, events: ["turn.ended"], secret: SECRET, timeout_ms: 60_000 }]);
      const m = await connect(w2, { CLAUDE_SESSIONS_WEBHOOKS: f });
      await m.callOk("run_task", { cwd: w2.dir("stuck"), prompt: "x", keep_session: false });
      await until(() => stuck.got.length >= 1, 30_000);
      const pid = m.pid!;
      const t0 = Date.now();
      await m.close();
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await until(() => !alive(), 15_000);
      // Well inside the 60 s the try would have waited (and the server's own 10 s forced exit).
      expect(Date.now() - t0).toBeLessThan(8_000);
      const dead = readFileSync(join(w2.stateDir, "webhooks", "dead-letter.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(dead).toEqual([
        expect.objectContaining({ event: "turn.ended", attempts: 1, error: "the server stopped during the try" }),
      ]);
    } finally {
      await stuck.close();
      w2.cleanup();
    }
  }, 90_000);

  it("a bad webhooks file stops the server with the reason", async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      [
        "readable by others",
        { CLAUDE_SESSIONS_WEBHOOKS: writeHooks(w, [{ url: good.url, events: ["turn.ended"], secret: SECRET }], 0o644) },
        /readable or writable by others/,
      ],
      [
        "plain http off loopback",
        { CLAUDE_SESSIONS_WEBHOOKS: writeHooks(w, [{ url: "http://example.com/hook", events: ["turn.ended"], secret: SECRET }]) },
        /must be https/,
      ],
      [
        "an unset secret variable",
        {
          CLAUDE_SESSIONS_WEBHOOKS: writeHooks(w, [
            { url: "https://example.com/hook", events: ["turn.ended"], secret: { env: "NOT_SET_ANYWHERE" } },
          ]),
        },
        /NOT_SET_ANYWHERE is not set/,
      ],
      [
        "an unknown event",
        {
          CLAUDE_SESSIONS_WEBHOOKS: writeHooks(w, [
            { url: "https://example.com/hook", events: ["turn.started"], secret: SECRET },
          ]),
        },
        /events\.0/,
      ],
    ];
    for (const [what, env, why] of cases) {
      const r = await serveFails(w, env);
      expect(r.code, what).toBe(1);
      expect(r.stderr, what).toMatch(why);
      expect(r.stderr, what).not.toContain(SECRET);
    }
  }, 60_000);
});
