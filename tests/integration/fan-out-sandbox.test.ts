/**
 * The checks of a sandboxed fan-out run in the sandbox (issue 34): with CLAUDE_SESSIONS_SANDBOX=on every attempt is a
 * sandboxed session (fake claude, real bubblewrap), and the operator's checks run confined — they may write their
 * worktree, not the repository beside it; they cannot read the test HOME's ~/.ssh or reach a port on the host. The
 * same checks in an unsandboxed fan-out do all three (what the box changes). merge_worktree's checks of the merged
 * result run in the box too for a sandboxed session (there the two that reach out fail and main stays). A check whose
 * program lives under /tmp (an npm-style package whose bin is a link to its script, run by a `node` of the same
 * folder, as a Node installed into a clone under /tmp) runs in the box: its installation is put back read-only.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, type Mcp, type World } from "../helpers/harness.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";

describe.runIf(sandboxDeps().ok)("a sandboxed fan-out's checks run in the sandbox (fake claude, bubblewrap)", () => {
  let w: World;
  let port: number;
  let server: Server;
  let hits = 0;
  let tools: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const newRepo = (name: string) => {
    const repo = w.dir(name);
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    return repo;
  };
  const checksFor = (repo: string) => {
    const file = join(w.root, `checks-${repo.split("/").pop()}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        checks: [
          {
            name: "inside",
            argv: ["sh", "-c", "echo checked > inside.txt && grep -qx good app.txt && git status --porcelain >/dev/null"],
            timeout_ms: 20_000,
          },
          { name: "outside", argv: ["sh", "-c", `echo pwned > ${join(repo, "pwned.txt")}`], timeout_ms: 20_000 },
          { name: "ssh", argv: ["cat", join(w.home, ".ssh", "id_test")], timeout_ms: 20_000 },
          { name: "tmp-program", argv: ["tmp-tool", "from /tmp"], timeout_ms: 20_000 },
          {
            name: "network",
            // bash's /dev/tcp: a connection and nothing else.
            argv: ["bash", "-c", `(: <>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && exit 0 || exit 3`],
            timeout_ms: 20_000,
          },
        ],
      }),
    );
    return file;
  };

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    mkdirSync(join(w.home, ".ssh"), { mode: 0o700 });
    writeFileSync(join(w.home, ".ssh", "id_test"), "SECRET-KEY-BYTES\n", { mode: 0o600 });
    server = createServer((s) => {
      hits++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
    // Under /tmp whatever TMPDIR says (the box always hides /tmp): tools/bin/tmp-tool links to
    // ../lib/node_modules/tmp-tool/bin/tool.js (#!/usr/bin/env node), which reads its package's lib/; tools/bin/node is this node.
    tools = mkdtempSync("/tmp/cs-check-tools-");
    const pkg = join(tools, "lib", "node_modules", "tmp-tool");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    mkdirSync(join(pkg, "lib"));
    mkdirSync(join(tools, "bin"));
    writeFileSync(join(pkg, "lib", "word.js"), 'module.exports = "ran";\n');
    writeFileSync(
      join(pkg, "bin", "tool.js"),
      '#!/usr/bin/env node\nrequire("fs").writeFileSync("tool.txt", require("../lib/word.js") + " " + process.argv[2] + "\\n");\n',
    );
    chmodSync(join(pkg, "bin", "tool.js"), 0o755);
    symlinkSync("../lib/node_modules/tmp-tool/bin/tool.js", join(tools, "bin", "tmp-tool"));
    symlinkSync(process.execPath, join(tools, "bin", "node"));
  });
  afterAll(async () => {
    server?.close();
    w?.cleanup();
    if (tools) rmSync(tools, { recursive: true, force: true });
  });

  const fan = async (sandbox: "on" | "off", name: string, merge: boolean) => {
    const repo = newRepo(name);
    const m: Mcp = await connect(w, {
      CLAUDE_SESSIONS_SANDBOX: sandbox,
      CLAUDE_SESSIONS_CHECKS: checksFor(repo),
      PATH: `${join(tools, "bin")}:${w.env.PATH}`,
    });
    try {
      const r = await m.callOk(
        "fan_out",
        {
          cwd: repo,
          prompt: "FAKE_BASH:echo good > app.txt",
          n: 1,
          permission_mode: "dontAsk",
          trust_workspace: true,
          timeout_ms: 60_000,
        },
        { timeout: 120_000 },
      );
      const a = r.attempts[0]!;
      const row = (await m.callOk("list_sessions", {})).sessions.find(
        (x: { session_id: string }) => x.session_id === a.session_id,
      );
      // What the "outside" check left in the repository (its checkout must be clean for the merge that follows).
      const pwned = existsSync(join(repo, "pwned.txt"));
      rmSync(join(repo, "pwned.txt"), { force: true });
      // merge_worktree runs the same checks on the merged result, in a scratch worktree: boxed too for a sandboxed session.
      const merged = merge ? await m.callOk("merge_worktree", { session_id: a.session_id }, { timeout: 120_000 }) : undefined;
      await m.callOk("kill_session", { session_id: a.session_id, force: true });
      return {
        repo,
        pwned,
        a,
        merged,
        sandboxed: row?.sandboxed === true,
        byName: Object.fromEntries(a.checks.map((c) => [c.name, c])),
      };
    } finally {
      await m.close();
    }
  };

  it("sandboxed: the worktree is writable; the repository beside it, ~/.ssh and the host's network are not", async () => {
    const before = hits;
    const { repo, pwned, a, merged, sandboxed, byName } = await fan("on", "boxed", true);
    expect(sandboxed).toBe(true);
    expect(a.outcome).toBe("completed");
    expect(byName.inside, byName.inside?.output_tail).toMatchObject({ passed: true });
    expect(readFileSync(join(a.worktree, "inside.txt"), "utf8")).toBe("checked\n");
    // Its program lives under the hidden /tmp: put back read-only with its package and the node its #! line finds.
    expect(byName["tmp-program"], byName["tmp-program"]?.output_tail).toMatchObject({ passed: true });
    expect(readFileSync(join(a.worktree, "tool.txt"), "utf8")).toBe("ran from /tmp\n");
    expect(pwned).toBe(false);
    expect(byName.ssh).toMatchObject({ passed: false });
    expect(byName.ssh!.output_tail).not.toContain("SECRET-KEY-BYTES");
    expect(readFileSync(a.checks_log!, "utf8")).not.toContain("SECRET-KEY-BYTES");
    expect(byName.network).toMatchObject({ passed: false, exit_code: 3 });
    expect(hits).toBe(before);
    // The merge's checks ran in the box: the two that reach out failed there, so main did not move.
    expect(merged?.merged).toBe(false);
    expect(merged?.reason).toContain("(ssh, network)");
    expect(merged?.target_after).toBe(merged?.target_before);
    expect(existsSync(join(repo, "pwned.txt"))).toBe(false);
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("todo\n");
  }, 180_000);

  it("unsandboxed, the same checks reach all three (what the box takes away)", async () => {
    const before = hits;
    const { pwned, a, sandboxed, byName } = await fan("off", "open", false);
    expect(sandboxed).toBe(false);
    expect(byName.inside).toMatchObject({ passed: true });
    expect(byName["tmp-program"]).toMatchObject({ passed: true });
    expect(pwned).toBe(true);
    expect(byName.ssh!.output_tail).toContain("SECRET-KEY-BYTES");
    expect(byName.network).toMatchObject({ passed: true });
    expect(hits).toBeGreaterThan(before);
    expect(a.checks_passed).toBe(5);
  }, 180_000);
});
