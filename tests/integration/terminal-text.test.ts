/**
 * Untrusted text never reaches the operator's terminal raw (issue 31): a session whose folder name and reply hold
 * terminal escapes (OSC title and clipboard, CSI colour), BEL, C1 controls and bidirectional overrides is listed,
 * started, sent to and tailed by the CLI, and nothing the CLI prints — stdout or stderr, the server's log lines too —
 * holds one of them raw; each shows as its JSON-style escape.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const run = tmuxOrSkip();

/** ESC sequences (OSC 0 window title, OSC 52 clipboard, CSI colour), BEL, a C1 CSI and a bidi override + isolate. */
const HOSTILE = "x\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[31m\x9b2J\u202eevil\u2066";
/** What must never be printed raw: C0 but newline and tab, DEL, C1, the bidi controls. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/u;

function rawIn(s: string): string | undefined {
  const m = RAW.exec(s);
  return m
    ? `U+${m[0].codePointAt(0)!.toString(16).padStart(4, "0")} at ${m.index}: ${JSON.stringify(s.slice(Math.max(0, m.index - 30), m.index + 30))}`
    : undefined;
}

describe.runIf(run)("untrusted text on the operator's terminal", () => {
  let w: World;
  let m: Mcp;
  let cwd: string;
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout: 60_000, cwd: w.root });
  beforeAll(async () => {
    w = makeWorld();
    cwd = join(w.work, `repo-${HOSTILE}`);
    mkdirSync(cwd);
    m = await connect(w);
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("ls, start, send, tail, kill and the error lines print control and bidi characters escaped", async () => {
    const start = cli("start", cwd, "--prompt", "first words", "--wait");
    expect(start.status, start.stderr).toBe(0);
    const id = start.stdout.split("\t")[0]!;
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    // The folder is shown, escaped: the operator still sees which one it is.
    expect(start.stdout).toContain("repo-x\\u001b]0;pwned\\u0007");
    expect(start.stdout).toContain("\\u009b2J\\u202eevil\\u2066");

    // The reply a hostile model (or a file it read aloud) gives: appended to the conversation as the CLI writes it.
    const projects = join(w.home, ".claude", "projects");
    const dir = readdirSync(projects)
      .map((d) => join(projects, d))
      .find((d) => readdirSync(d).some((f) => f.endsWith(".jsonl")))!;
    const file = join(
      dir,
      readdirSync(dir).find((f) => f.endsWith(".jsonl"))!,
    );
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = [...lines].reverse().find((l) => l.type === "assistant")!;
    const evil = {
      ...last,
      uuid: "00000000-0000-4000-8000-000000000001",
      parentUuid: last.uuid,
      message: { ...(last.message as object), content: [{ type: "text", text: `reply ${HOSTILE} end` }] },
    };
    appendFileSync(file, JSON.stringify(evil) + "\n");

    const outputs: Array<[string, ReturnType<typeof cli>]> = [
      ["start", start],
      ["ls", cli("ls")],
      ["ls --all", cli("ls", "--all")],
      ["tail", cli("tail", id)],
      ["send", cli("send", id, "more words")],
      ["audit", cli("audit")],
      ["nodes", cli("nodes")],
      ["start in a missing folder", cli("start", join(cwd, "missing"))],
      ["resume of a hostile id", cli("resume", HOSTILE)],
      ["unknown command", cli(HOSTILE)],
    ];
    const tail = outputs.find(([n]) => n === "tail")![1];
    expect(tail.stdout).toContain(
      "reply x\\u001b]0;pwned\\u0007\\u001b]52;c;cHduZWQ=\\u0007\\u001b[31m\\u009b2J\\u202eevil\\u2066 end",
    );
    const ls = outputs.find(([n]) => n === "ls")![1];
    expect(ls.stdout).toContain(id);
    expect(ls.stdout).toContain("\\u202eevil");
    // The audit's lines stay JSON.
    const audit = outputs.find(([n]) => n === "audit")![1];
    expect(
      audit.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { tool: string }).tool),
    ).toContain("start_session");
    expect(outputs.find(([n]) => n === "start in a missing folder")![1].status).toBe(1);
    outputs.push(["kill", cli("kill", id)]);
    for (const [name, r] of outputs) {
      expect(rawIn(r.stdout), `${name}: stdout`).toBeUndefined();
      expect(rawIn(r.stderr), `${name}: stderr`).toBeUndefined();
    }
  });
});
