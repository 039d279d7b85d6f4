/**
 * A team in the sandbox (issue 32) with the real Claude Code CLI against the mock API, on tmux: a sandboxed lead and
 * a sandboxed member message each other through their member servers (inside bubblewrap and the seccomp filter that
 * forbids Unix sockets, through the launcher's one relay socket), and the lead's start_teammate starts a sandboxed
 * teammate although the operator's default is off. A Unix socket other than the relay stays out of reach.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedRequest, Reply } from "../fixtures/mock-anthropic.js";
import { tmuxOrSkip, until, type Mcp } from "../helpers/harness.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";

const run = realClaudeOrSkip() && tmuxOrSkip() && sandboxDeps().ok;
const SERVER = "claude-sessions-team";
const tool = (name: string) => `mcp__${SERVER}__${name}`;

type Block = { type: string; text?: string; name?: string; content?: unknown; is_error?: boolean };
const blocksOf = (c: unknown): Block[] =>
  typeof c === "string" ? [{ type: "text", text: c }] : Array.isArray(c) ? (c as Block[]) : [];
const textOf = (c: unknown): string =>
  blocksOf(c)
    .map((b) => (b.type === "text" ? (b.text ?? "") : ""))
    .join("");

/** The conversation since its last typed prompt: that prompt, the tools called since, and the last tool result. */
function turnOf(req: RecordedRequest): { prompt: string; called: string[]; lastResult?: string } {
  const messages = (req.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  let start = 0;
  let prompt = "";
  messages.forEach((msg, i) => {
    if (msg.role !== "user") return;
    const typed = blocksOf(msg.content)
      .filter((b) => b.type === "text" && !/^\s*</.test(b.text ?? ""))
      .map((b) => b.text ?? "");
    if (typed.length && !blocksOf(msg.content).some((b) => b.type === "tool_result")) {
      start = i;
      prompt = typed.join("").trim();
    }
  });
  const after = messages.slice(start + 1);
  const called = after.flatMap((msg) =>
    msg.role === "assistant"
      ? blocksOf(msg.content)
          .filter((b) => b.type === "tool_use")
          .map((b) => b.name!)
      : [],
  );
  const last = after
    .flatMap((msg) => (msg.role === "user" ? blocksOf(msg.content).filter((b) => b.type === "tool_result") : []))
    .at(-1);
  return { prompt, called: called.filter((n) => n !== "ToolSearch"), ...(last ? { lastResult: textOf(last.content) } : {}) };
}

/** Loads the member tool first when the CLI defers it (ToolSearch), then calls it. */
function callTool(req: RecordedRequest, name: string, input: Record<string, unknown>): Reply {
  const loaded = ((req.body?.tools ?? []) as Array<{ name: string }>).some((t) => t.name === tool(name));
  if (!loaded) return { blocks: [{ type: "tool_use", name: "ToolSearch", input: { query: `select:${tool(name)}` } }] };
  return { blocks: [{ type: "tool_use", name: tool(name), input }] };
}

/**
 * Whether session `id` runs in the sandbox: some of its processes (those with its CLAUDE_SESSIONS_ID) are in another
 * pid namespace (bubblewrap's), and none left in ours is anything but the launcher, the wrappers that start it and
 * the runtime's proxy bridge (socat).
 */
function underBwrap(id: string): boolean {
  const ours = readlinkSync("/proc/self/ns/pid");
  const inside: string[] = [];
  const outside: string[] = [];
  for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      if (!readFileSync(`/proc/${p}/environ`, "utf8").split("\0").includes(`CLAUDE_SESSIONS_ID=${id}`)) continue;
      const comm = readFileSync(`/proc/${p}/comm`, "utf8").trim();
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
      if (readlinkSync(`/proc/${p}/ns/pid`) !== ours) inside.push(comm);
      else if (!["sh", "bwrap", "socat", "launch.sh", "doppler"].includes(comm) && !cmd.includes("sandbox/launcher.js"))
        outside.push(`${p} ${comm}`);
    } catch {
      // Gone meanwhile.
    }
  }
  if (!(inside.length > 0 && outside.length === 0)) lastSeen = JSON.stringify({ inside, outside });
  return inside.length > 0 && outside.length === 0;
}
let lastSeen = "";

describe.each(run ? (["tmux", "headless"] as const) : [])("real claude: a team in the sandbox (%s)", (backend) => {
  let e: E2e;
  let m: Mcp;
  const ids: Record<string, string> = {};
  let otherSocket = "";
  let probe: Server;
  let probeHits = 0;

  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["team"] });
    m = await e.connect({ CLAUDE_SESSIONS_BACKEND: backend });
    // Another Unix socket the session can see: one listening in its own cwd.
    otherSocket = join(e.dir("team"), "probe.sock");
    probe = createServer((c) => {
      probeHits++;
      c.destroy();
    });
    await new Promise<void>((r) => probe.listen(otherSocket, r));
    e.mock.setHandler((req) => {
      const t = turnOf(req);
      if (t.prompt === "GO_LEAD") {
        if (t.called.length === 0)
          return callTool(req, "message_teammate", {
            teammate_name: "b",
            message: "what is the answer?",
            wait_for_response: true,
            timeout_ms: 90_000,
          });
        return { text: `LEAD got: ${t.lastResult ?? ""}` };
      }
      if (t.prompt === "From lead: what is the answer?") return { text: "B says 42" };
      if (t.prompt === "GO_B") {
        if (t.called.length === 0) return callTool(req, "message_teammate", { teammate_name: "lead", message: "B is done" });
        return { text: `B sent: ${t.lastResult ?? ""}` };
      }
      if (t.prompt === "From b: B is done") return { text: "lead noted it" };
      if (t.prompt === "GO_HIRE") {
        if (t.called.length === 0) return callTool(req, "start_teammate", { teammate_name: "helper" });
        return { text: `hired: ${t.lastResult ?? ""}` };
      }
      if (t.prompt === "GO_UNIX") {
        if (t.called.length === 0)
          return {
            blocks: [
              {
                type: "tool_use",
                name: "Bash",
                input: {
                  command: `node -e 'const s=require("net").connect(process.argv[1]);s.on("connect",()=>{console.log("UNIX-CONNECTED");process.exit(0)});s.on("error",e=>{console.log("UNIX-REFUSED "+e.code);process.exit(0)})' ${JSON.stringify(otherSocket)}`,
                },
              },
            ],
          };
        return { text: `unix: ${t.lastResult ?? ""}` };
      }
      return undefined;
    });
    const started = await Promise.all([
      m.callOk("start_session", {
        cwd: e.dir("team"),
        team_name: "crew",
        teammate_name: "lead",
        team_lead: true,
        sandbox: true,
        allowed_tools: ["Bash"],
      }),
      m.callOk("start_session", { cwd: e.dir("team"), team_name: "crew", teammate_name: "b", sandbox: true }),
    ]);
    for (const s of started) {
      expect(s.sandboxed).toBe(true);
      ids[s.teammate_name!] = s.session_id;
    }
  }, 180_000);
  afterAll(async () => {
    for (const id of Object.values(ids)) await m?.call("kill_session", { session_id: id });
    await m?.close();
    await new Promise((r) => probe?.close(r));
    await e?.cleanup();
  });

  it("every member's Claude Code runs under bubblewrap (in its pid namespace), nothing of it outside but the launcher", () => {
    for (const id of [ids.lead!, ids.b!]) expect(underBwrap(id), `${id} ${lastSeen}`).toBe(true);
  });

  it("the sandboxed lead messages the sandboxed member and gets its answer", async () => {
    const r = await m.callOk(
      "send_message",
      { session_id: ids.lead!, message: "GO_LEAD", timeout_ms: 120_000 },
      { timeout: 150_000 },
    );
    expect(r).toMatchObject({ completed: true });
    expect(r.response).toContain("LEAD got:");
    expect(r.response).toContain("B says 42");
    expect(e.requestsWith("From lead: what is the answer?").length).toBeGreaterThan(0);
  }, 180_000);

  it("the sandboxed member messages the lead", async () => {
    const r = await m.callOk("send_message", { session_id: ids.b!, message: "GO_B", timeout_ms: 90_000 }, { timeout: 120_000 });
    expect(r).toMatchObject({ completed: true });
    expect(r.response).toContain("B sent:");
    expect(r.response).not.toContain("error");
    const w = await m.callOk("wait_for_completion", { session_id: ids.lead!, timeout_ms: 90_000 });
    expect(w).toMatchObject({ completed: true, last_response: "lead noted it" });
  }, 240_000);

  it("the sandboxed lead's start_teammate starts a sandboxed teammate", async () => {
    const r = await m.callOk(
      "send_message",
      { session_id: ids.lead!, message: "GO_HIRE", timeout_ms: 120_000 },
      { timeout: 150_000 },
    );
    expect(r.response).toContain("hired:");
    const got = /"session_id":"([^"]+)"/.exec(r.response as string)?.[1];
    expect(got, r.response as string).toBeDefined();
    ids.helper = got!;
    const row = (await m.callOk("list_sessions", {})).sessions.find((x: { session_id: string }) => x.session_id === got);
    expect(row).toMatchObject({ teammate_name: "helper", team_name: "crew", sandboxed: true });
    await until(() => underBwrap(got!) || undefined, 60_000, 200);
    const rec = (
      JSON.parse(readFileSync(join(e.world.stateDir, "state.json"), "utf8")) as {
        sessions: Record<string, { sandbox?: unknown }>;
      }
    ).sessions[got!];
    expect(rec?.sandbox).toBeDefined();
  }, 180_000);

  it("no other Unix socket is reachable from inside: the seccomp filter still refuses them", async () => {
    const r = await m.callOk(
      "send_message",
      { session_id: ids.lead!, message: "GO_UNIX", timeout_ms: 90_000 },
      { timeout: 120_000 },
    );
    expect(r.response).toContain("UNIX-REFUSED");
    expect(r.response).not.toContain("UNIX-CONNECTED");
    expect(probeHits).toBe(0);
  }, 150_000);
});
