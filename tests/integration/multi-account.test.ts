/**
 * Issue 33, several accounts, with the fake claude on real tmux: CLAUDE_SESSIONS_ACCOUNTS names a 0600 file of
 * accounts (a config folder each, the NAME of a server variable holding an API key, or a Doppler secret). A session
 * started under account B writes its transcript under B's folder; a key account's key (from the server's environment,
 * or read from the stand-in Doppler) reaches the CLI's environment and nowhere else (state.json, the events, the
 * server's log, any process's argv); `auto` picks the account with room; an
 * unknown account, a file open to others, a file that does not parse or a key written inline are INVALID_ARGUMENT
 * and start nothing; a session limited on A continues its conversation on B (resume_session {account}).
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, FIXTURES, connect, makeWorld, processesIn, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";

const HAS_TMUX = tmuxOrSkip();
const KEY = "sk-ant-test-" + "0123456789abcdef".repeat(2);
/** The key of account D, held by the (stand-in) Doppler only: the accounts file names its project, config and secret. */
const DKEY = "sk-ant-dop-" + "fedcba9876543210".repeat(2);

const projects = (configDir: string, cwd: string) => join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));

/** The user lines' prompts of every transcript of `cwd` under `configDir`. */
function prompts(configDir: string, cwd: string): string[] {
  const dir = projects(configDir, cwd);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".jsonl"))
    .flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n"))
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type?: string; message?: { content?: unknown } })
    .filter((l) => l.type === "user" && typeof l.message?.content === "string")
    .map((l) => l.message!.content as string);
}

/** How many turns answered `prompt` (a Stop whose reply is the fake's answer to it). */
function answers(w: World, id: string, prompt: string): number {
  return readFileSync(join(w.stateDir, id, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { hook_event_name?: string; last_assistant_message?: string })
    .filter((e) => e.hook_event_name === "Stop" && e.last_assistant_message === `FAKE REPLY: ${prompt}`).length;
}

type Row = { session_id: string; status: string; limit?: { wake_at?: string } };
async function rowOf(m: Mcp, id: string): Promise<Row | undefined> {
  return (await m.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id) as Row | undefined;
}

describe.runIf(HAS_TMUX)("accounts: a session runs under the operator's named account (issue 33)", () => {
  let w: World;
  let m: Mcp;
  let file: string;
  let dirA: string;
  let dirB: string;
  let report: string;
  const good = () =>
    JSON.stringify({
      accounts: {
        A: { config_dir: dirA },
        B: { config_dir: dirB },
        K: { api_key_env: "CS_TEST_KEY_K" },
        D: { doppler: { project: "keys", config: "prd", secret: "TEAM_KEY" } },
      },
    });

  beforeAll(async () => {
    w = makeWorld({
      CLAUDE_SESSIONS_IDLE_TTL_MS: "0",
      CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "60000",
      CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
    });
    dirA = join(w.root, "acct-a");
    dirB = join(w.root, "acct-b");
    for (const d of [dirA, dirB]) mkdirSync(d, { recursive: true });
    file = join(w.root, "accounts.json");
    writeFileSync(file, good(), { mode: 0o600 });
    report = join(w.root, "report.jsonl");
    const dopplerData = join(w.root, "doppler.json");
    writeFileSync(
      dopplerData,
      JSON.stringify({ tokens: { "dp.st.test": {} }, projects: { keys: { prd: { TEAM_KEY: DKEY } } } }),
      {
        mode: 0o600,
      },
    );
    m = await connect(w, {
      CLAUDE_SESSIONS_ACCOUNTS: file,
      CS_TEST_KEY_K: KEY,
      FAKE_CLAUDE_REPORT: report,
      DOPPLER_PATH: join(FIXTURES, "doppler-bin", "doppler"),
      DOPPLER_TOKEN: "dp.st.test",
      FAKE_DOPPLER_DATA: dopplerData,
    });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("a session under B writes its transcript under B's folder, and the record keeps only the name", async () => {
    const cwd = w.dir("under-b");
    const s = await m.callOk("start_session", { cwd, account: "B" });
    await m.callOk("send_message", { session_id: s.session_id, message: "hello from B", timeout_ms: 20_000 });
    expect(prompts(dirB, cwd)).toContain("hello from B");
    expect(prompts(dirA, cwd)).toEqual([]);
    expect(prompts(join(w.home, ".claude"), cwd)).toEqual([]);
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { account?: string }>;
    };
    expect(state.sessions[s.session_id]?.account).toBe("B");
    // The server reads it back from B's folder too.
    const conv = await m.callOk("stream_output", { session_id: s.session_id, mode: "transcript" });
    expect(JSON.stringify(conv)).toContain("hello from B");
  }, 60_000);

  it("a key account: the key reaches the CLI's environment only — never state.json, events, the log or argv", async () => {
    const cwd = w.dir("under-k");
    const s = await m.callOk("start_session", { cwd, account: "K" });
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_ENV:ANTHROPIC_API_KEY", timeout_ms: 20_000 });
    const seen = readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { name: string; value: string | null });
    expect(seen.find((r) => r.name === "ANTHROPIC_API_KEY")?.value).toBe(KEY);
    const ps = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" });
    expect(ps).not.toContain(KEY);
    expect(processesIn(cwd).length).toBeGreaterThan(0);
    expect(readFileSync(join(w.stateDir, "state.json"), "utf8")).not.toContain(KEY);
    expect(readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8")).not.toContain(KEY);
    expect(m.stderr()).not.toContain(KEY);
    const listed = await m.callOk("list_sessions", {});
    expect(JSON.stringify(listed)).not.toContain(KEY);
  }, 60_000);

  it("a doppler account: its key is read from Doppler and reaches the CLI's environment only — never state, events, the log, results or argv", async () => {
    const cwd = w.dir("under-d");
    const s = await m.callOk("start_session", { cwd, account: "D" });
    await m.callOk("send_message", { session_id: s.session_id, message: "FAKE_ENV:ANTHROPIC_API_KEY", timeout_ms: 20_000 });
    const seen = readFileSync(report, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { name: string; value: string | null });
    expect(seen.filter((r) => r.name === "ANTHROPIC_API_KEY").map((r) => r.value)).toContain(DKEY);
    expect(processesIn(cwd).length).toBeGreaterThan(0);
    expect(execFileSync("ps", ["-eo", "args"], { encoding: "utf8" })).not.toContain(DKEY);
    expect(readFileSync(join(w.stateDir, "state.json"), "utf8")).not.toContain(DKEY);
    expect(readFileSync(join(w.stateDir, s.session_id, "events.jsonl"), "utf8")).not.toContain(DKEY);
    expect(m.stderr()).not.toContain(DKEY);
    expect(JSON.stringify(await m.callOk("list_sessions", {}))).not.toContain(DKEY);
    // The audit log and every file the server wrote for the session hold only the account's name.
    expect(readFileSync(join(w.stateDir, "audit.jsonl"), "utf8")).not.toContain(DKEY);
    await m.callOk("kill_session", { session_id: s.session_id, save_state: false });
  }, 60_000);

  it("a doppler account whose secret Doppler does not have: DOPPLER_ERROR naming the secret, nothing started", async () => {
    writeFileSync(file, good().replace('"secret":"TEAM_KEY"', '"secret":"NO_SUCH_KEY"'), { mode: 0o600 });
    try {
      const r = await m.call("start_session", { cwd: w.dir("under-d-bad"), account: "D" });
      expect(r.error?.code, r.text).toBe("DOPPLER_ERROR");
      expect(r.error?.message).toContain("account D");
      expect(processesIn(w.dir("under-d-bad"))).toEqual([]);
    } finally {
      writeFileSync(file, good(), { mode: 0o600 });
    }
  }, 60_000);

  it("auto: the account with room (not limited, fewest sessions)", async () => {
    const s = await m.callOk("start_session", { cwd: w.dir("auto"), account: "auto" });
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { account?: string }>;
    };
    // B and K have a session each, A none.
    expect(state.sessions[s.session_id]?.account).toBe("A");
    await m.callOk("kill_session", { session_id: s.session_id, save_state: false });
  }, 60_000);

  it("bad input: unknown account, a file open to others, one that does not parse, a key inline — INVALID_ARGUMENT, nothing started", async () => {
    const before = (await m.callOk("list_sessions", {})).sessions.length;
    const cwd = w.dir("bad");
    const unknown = await m.call("start_session", { cwd, account: "nobody" });
    expect(unknown.error?.code, unknown.text).toBe("INVALID_ARGUMENT");
    expect(unknown.error?.message).toContain("unknown account");
    chmodSync(file, 0o644);
    const open = await m.call("start_session", { cwd, account: "A" });
    expect(open.error?.code, open.text).toBe("INVALID_ARGUMENT");
    expect(open.error?.message).toContain("mode 644");
    chmodSync(file, 0o600);
    writeFileSync(file, "{ not json", { mode: 0o600 });
    const broken = await m.call("start_session", { cwd, account: "A" });
    expect(broken.error?.code, broken.text).toBe("INVALID_ARGUMENT");
    // A key written where a variable's name belongs is refused, and never quoted back.
    writeFileSync(file, JSON.stringify({ accounts: { A: { api_key_env: KEY } } }), { mode: 0o600 });
    const inline = await m.call("start_session", { cwd, account: "A" });
    expect(inline.error?.code, inline.text).toBe("INVALID_ARGUMENT");
    expect(inline.text).not.toContain(KEY);
    expect(m.stderr()).not.toContain(KEY);
    writeFileSync(file, good(), { mode: 0o600 });
    expect((await m.callOk("list_sessions", {})).sessions.length).toBe(before);
    expect(processesIn(cwd)).toEqual([]);
  }, 60_000);

  it("a session limited on A continues its conversation on B (resume_session {account})", async () => {
    const cwd = w.dir("switch");
    const s = await m.callOk("start_session", { cwd, account: "A" });
    await m.callOk("send_message", { session_id: s.session_id, message: "first on A", timeout_ms: 20_000 });
    const gate = join(w.root, "limit-a");
    writeFileSync(gate, "");
    const r = await m.call("send_message", {
      session_id: s.session_id,
      message: `second FAKE_LIMIT:${gate}`,
      timeout_ms: 20_000,
    });
    expect(r.error?.code, r.text).toBe("LIMITED");
    await until(async () => (await rowOf(m, s.session_id))?.limit?.wake_at !== undefined, 10_000);
    await until(() => processesIn(cwd).length === 0, 10_000);
    // A is shown limited: by the CLI's `accounts`, by health_check, and auto now passes it by.
    const cli = spawnSync(process.execPath, [CLI, "accounts"], {
      env: { ...w.env, CLAUDE_SESSIONS_ACCOUNTS: file },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(cli.status, cli.stderr).toBe(0);
    const lineA = cli.stdout.split("\n").find((l) => l.startsWith("A\t"));
    expect(lineA).toContain(s.session_id);
    expect(lineA).toMatch(/limited until \d{4}-/);
    expect(cli.stdout.split("\n").find((l) => l.startsWith("B\t"))).toContain("room");
    expect(cli.stdout).not.toContain(KEY);
    const health = await m.callOk("health_check", {});
    const check = health.checks.find((c) => c.name === "accounts");
    expect(check?.detail).toMatch(/A: 1 session\(s\), limited until/);
    const auto = await m.callOk("start_session", { cwd: w.dir("auto-2"), account: "auto" });
    const picked = (
      JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as { sessions: Record<string, { account?: string }> }
    ).sessions[auto.session_id]?.account;
    expect(picked).not.toBe("A");
    await m.callOk("kill_session", { session_id: auto.session_id, save_state: false });
    await m.callOk("resume_session", { session_id: s.session_id, account: "B" });
    await m.callOk("send_message", { session_id: s.session_id, message: "third on B", timeout_ms: 20_000 });
    // B's copy of the conversation holds what was said on A, then the new prompt.
    const onB = prompts(dirB, cwd);
    expect(onB).toEqual(expect.arrayContaining(["first on A", "third on B"]));
    expect(onB.indexOf("first on A")).toBeLessThan(onB.indexOf("third on B"));
    expect(prompts(dirA, cwd)).not.toContain("third on B");
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { account?: string }>;
    };
    expect(state.sessions[s.session_id]?.account).toBe("B");
  }, 90_000);
});

describe.runIf(HAS_TMUX)("CLAUDE_SESSIONS_ON_LIMIT=switch_account (issue 33)", () => {
  let w: World;
  let m: Mcp;
  let dirA: string;
  let dirB: string;
  beforeAll(async () => {
    // The limit's own wait is a minute: an answer within the test's time came from the switch, not the reset.
    w = makeWorld({
      CLAUDE_SESSIONS_IDLE_TTL_MS: "0",
      CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: "60000",
      CLAUDE_SESSIONS_LIMIT_JITTER_MS: "0",
      CLAUDE_SESSIONS_ON_LIMIT: "switch_account",
    });
    dirA = join(w.root, "acct-a");
    dirB = join(w.root, "acct-b");
    for (const d of [dirA, dirB]) mkdirSync(d, { recursive: true });
    const file = join(w.root, "accounts.json");
    writeFileSync(file, JSON.stringify({ accounts: { A: { config_dir: dirA }, B: { config_dir: dirB } } }), { mode: 0o600 });
    m = await connect(w, { CLAUDE_SESSIONS_ACCOUNTS: file });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("a session limited on A continues at once on B: the interrupted prompt answered there, once, with the conversation so far", async () => {
    const cwd = w.dir("switch-auto");
    const s = await m.callOk("start_session", { cwd, account: "A" });
    await m.callOk("send_message", { session_id: s.session_id, message: "first on A", timeout_ms: 20_000 });
    const gate = join(w.root, "limit-a");
    writeFileSync(gate, "");
    const prompt = `job FAKE_LIMIT:${gate}`;
    const t0 = Date.now();
    const r = await m.call("send_message", { session_id: s.session_id, message: prompt, timeout_ms: 20_000 });
    expect(r.error?.code, r.text).toBe("LIMITED");
    // B has room (the fake's limit is the gate file: gone now). A's own wait is a minute: an answer well before it
    // came from the switch.
    rmSync(gate);
    await until(() => answers(w, s.session_id, prompt) === 1, 40_000).catch((e: unknown) => {
      throw new Error(
        `${String(e)}; the server said: ${m
          .stderr()
          .split("\n")
          .filter((l) => /limit|account|switch|warn|error/i.test(l))
          .slice(-15)
          .join("\n")}`,
      );
    });
    expect(Date.now() - t0).toBeLessThan(50_000);
    const state = JSON.parse(readFileSync(join(w.stateDir, "state.json"), "utf8")) as {
      sessions: Record<string, { account?: string }>;
    };
    expect(state.sessions[s.session_id]?.account).toBe("B");
    // B's copy of the conversation holds A's turns, then the prompt answered there; A's never got the answer.
    const onB = prompts(dirB, cwd);
    expect(onB.indexOf("first on A")).toBeGreaterThanOrEqual(0);
    expect(onB.lastIndexOf(prompt)).toBeGreaterThan(onB.indexOf("first on A"));
    // Once: nothing more is sent later.
    await new Promise((res) => setTimeout(res, 2000));
    expect(answers(w, s.session_id, prompt)).toBe(1);
    expect((await rowOf(m, s.session_id))?.status).toBe("idle");
  }, 90_000);
});
