/**
 * A hostile or broken node, no root needed: the node is tests/fixtures/hostile-node.mjs, a small MCP server on stdio
 * that answers initialize and every ping and then does what its config says (bad rows, a hostile attach_command,
 * tools it never answers, a flood of notices, a capacity it does not have; it records the environment it was given).
 * The coordinator is the built server with a real MCP client. What a user checks: a node's words never run here, one
 * silent node never hangs a call, a bad row is dropped (the others kept), a flood reaches the client rate-limited,
 * `auto` does not believe a capacity the node does not have, and the node's command never sees this server's secrets.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CLI, connect, FIXTURES, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { writeNodesFile } from "../helpers/test-hosts.mjs";

const HOSTILE = join(FIXTURES, "hostile-node.mjs");
/** In an attach prefix: the world's argv.txt. */
const ARGV_FILE = "<argv file>";

/** A session row as a node's list_sessions gives it (valid unless changed). */
function row(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: id, claude_session_id: `c-${id}`, status: "idle", backend: "tmux", survives_restart: true, cwd: "/srv", created_at: "2026-01-01T00:00:00.000Z", turn_count: 0, ...extra };
}

interface Setup {
  w: World;
  m?: Mcp;
  /** The hostile node's config file. */
  cfg: string;
}

const made: Setup[] = [];

/** A coordinator world whose node "bad" is the hostile fake with `cfg`, plus `nodes` given as they are. */
function world(cfg: Record<string, unknown>, opts: { attach?: string[]; env?: Record<string, string>; nodes?: Record<string, { exec: string[]; attach?: string[] }> } = {}): Setup {
  const w = makeWorld(opts.env ?? {});
  const path = join(w.root, "hostile.json");
  writeFileSync(path, JSON.stringify(cfg));
  if (opts.attach) opts.attach = opts.attach.map((a) => (a === ARGV_FILE ? join(w.root, "argv.txt") : a));
  w.env.CLAUDE_SESSIONS_NODES = writeNodesFile(w.root, { bad: { exec: [process.execPath, HOSTILE, path], ...(opts.attach ? { attach: opts.attach } : {}) }, ...opts.nodes });
  const s: Setup = { w, cfg: path };
  made.push(s);
  return s;
}

afterEach(async () => {
  for (const s of made.splice(0)) {
    await s.m?.close().catch(() => {});
    s.w.cleanup();
  }
});

const cli = (w: World, args: string[], timeout = 60_000) => spawnSync(process.execPath, [CLI, ...args], { env: w.env, encoding: "utf8", timeout });

describe.skipIf(!tmuxOrSkip())("a hostile node", () => {
  afterAll(() => {});

  it("its attach_command never becomes a local command: the line is rebuilt from its tmux socket and the session's id", async () => {
    const s = world(
      {
        rows: [
          // An option where the socket goes, a line that is not tmux, another session's tmux session, and an honest one.
          row("hn-opt", { attach_command: "tmux -L '-oProxyCommand=touch /tmp/cs-pwned' attach -t =cs-hn-opt" }),
          row("hn-word", { attach_command: "-oProxyCommand=touch' '/tmp/cs-pwned attach -t =cs-hn-word" }),
          row("hn-other", { attach_command: "tmux -L cs-node attach -t =cs-hn-ok" }),
          row("hn-ok", { attach_command: "tmux -L 'cs-node' attach -t =cs-hn-ok" }),
        ],
      },
      // The operator's prefix here records the argv it is given (its first word after the script is the file).
      { attach: ["sh", "-c", 'printf "%s\\n" "$@" > "$0"', ARGV_FILE] },
    );
    const out = join(s.w.root, "argv.txt");
    s.m = await connect(s.w);
    const listed = await until(async () => {
      const l = await s.m!.callOk("list_sessions", { status_filter: "all" });
      return l.sessions.length === 4 ? l : undefined;
    }, 20_000, 200);
    const byId = new Map(listed.sessions.map((r) => [r.session_id, r as { attach_command?: string }]));
    expect(byId.get("hn-ok")!.attach_command).toBe(`sh -c 'printf "%s\\n" "$@" > "$0"' ${out} tmux -L cs-node attach -t =cs-hn-ok`);
    for (const id of ["hn-opt", "hn-word", "hn-other"]) expect(byId.get(id)!.attach_command, id).toBeUndefined();

    // `claude-sessions attach`: the honest one runs the prefix with this server's own tmux attach …
    const ok = cli(s.w, ["attach", "hn-ok"]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(out, "utf8").split("\n").filter(Boolean)).toEqual(["tmux", "-L", "cs-node", "attach", "-t", "=cs-hn-ok"]);
    // … the others run nothing and say why.
    for (const id of ["hn-opt", "hn-word", "hn-other"]) {
      writeFileSync(out, "");
      const r = cli(s.w, ["attach", id]);
      expect(r.status, id).not.toBe(0);
      expect(r.stderr, id).toContain("cannot be attached to");
      expect(readFileSync(out, "utf8"), id).toBe("");
    }
    expect(existsSync("/tmp/cs-pwned")).toBe(false);
  }, 120_000);

  it('an ssh attach prefix without "--" is refused when nodes.json is read', () => {
    const s = world({}, { attach: ["ssh", "-t", "host"] });
    const serve = spawnSync(process.execPath, [CLI, "serve"], { env: s.w.env, encoding: "utf8", input: "", timeout: 30_000 });
    expect(serve.status).toBe(1);
    expect(serve.stderr).toContain('an ssh "attach" prefix ends with "--"');
  });
});

void spawn;
void LoggingMessageNotificationSchema;
