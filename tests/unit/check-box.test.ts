/**
 * The box a sandboxed session's checks run in (issue 34): bubblewrap's argv — every namespace unshared (no network),
 * the masks before the worktree's writable bind, the check's own argv after `--` as it is (never through a shell) —
 * and what checkBox hides on this machine: /tmp (a test HOME and state directory live there, so they are hidden with
 * it, not masked twice); a worktree's git folder (the repository's, under /tmp) put back read-only; a check's program in
 * a hidden temporary folder put back with its installation and its `#!` interpreter (programBinds), never the hidden
 * folder itself, a place that stays hidden, or a folder holding a unix socket.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { boxed, programBinds, type CheckBox } from "../../src/sandbox/check-box.js";
import { sandboxDeps } from "../../src/sandbox/deps.js";
import { checkBox } from "../../src/sessions/attempts/check-box.js";

describe("the checks' box", () => {
  it("unshares every namespace, masks before the worktree's bind, and passes the check's argv after -- untouched", () => {
    const r = boxed(
      {
        bwrap: "/usr/bin/bwrap",
        cwd: "/w/tree",
        hideDirs: ["/tmp", "/home/u/.ssh"],
        hideFiles: ["/home/u/.netrc"],
        readOnly: ["/tmp/repo/.git"],
      },
      "/usr/bin/sh",
      ["-c", "echo $HOME; rm -rf /", "--share-net"],
    );
    expect(r.file).toBe("/usr/bin/bwrap");
    const a = r.args;
    expect(a[0]).toBe("--unshare-all");
    const sep = a.indexOf("--");
    expect(a.slice(sep + 1)).toEqual(["/usr/bin/sh", "-c", "echo $HOME; rm -rf /", "--share-net"]);
    expect(a.slice(0, sep)).not.toContain("--share-net");
    const at = (x: string) => a.indexOf(x);
    expect(at("/home/u/.ssh")).toBeLessThan(at("/w/tree"));
    expect(at("/home/u/.netrc")).toBeLessThan(at("/w/tree"));
    expect(a.slice(sep - 5, sep)).toEqual(["--bind", "/w/tree", "/w/tree", "--chdir", "/w/tree"]);
  });

  const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-box-")));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.runIf(sandboxDeps().ok)(
    "hides /tmp once (HOME's credentials and the state inside it are not masked twice); puts the repository's git folder back",
    async () => {
      const home = join(root, "home");
      mkdirSync(join(home, ".ssh"), { recursive: true });
      writeFileSync(join(home, ".netrc"), "machine x\n");
      const repo = join(root, "repo");
      mkdirSync(repo);
      const g = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "-C", repo, ...args], {
          env: { PATH: process.env.PATH ?? "", HOME: root },
        });
      g("init", "-q");
      g("commit", "-q", "--allow-empty", "-m", "one");
      const tree = join(root, "state", "worktrees", "a");
      g("worktree", "add", "-q", "--detach", tree);
      const state = join(root, "state");
      const old = process.env.HOME;
      process.env.HOME = home;
      try {
        const box = await checkBox({ stateDir: state, claudeConfigDir: join(home, ".claude") } as Config, tree);
        expect(box.hideDirs).toContain("/tmp");
        // Inside /tmp already: not masked twice.
        expect(box.hideDirs).not.toContain(join(home, ".ssh"));
        expect(box.cwd).toBe(tree);
        // The worktree's git folder is the repository's, under the hidden /tmp: back, read-only.
        expect(box.readOnly).toEqual([join(repo, ".git")]);
        // The worktree is the last bind: writable above the masks.
        const a = boxed(box, "/bin/true", []).args;
        expect(a.lastIndexOf(tree)).toBeGreaterThan(a.lastIndexOf(join(repo, ".git")));
      } finally {
        process.env.HOME = old;
      }
    },
  );

  describe("a check's program in a hidden temporary folder", () => {
    const t = join(root, "t");
    const box = (): CheckBox => ({
      bwrap: "/usr/bin/bwrap",
      cwd: join(root, "tree"),
      hideDirs: [t, join(root, "cred")],
      hideFiles: [],
      readOnly: [],
      programsFrom: [t],
      keepHidden: [join(root, "cred"), join(t, "w", "state")],
    });
    const exe = (p: string, text: string) => {
      mkdirSync(join(p, ".."), { recursive: true });
      writeFileSync(p, text);
      chmodSync(p, 0o755);
    };

    it("puts back the installation of the program (npm's bin link) and of the node its #! line finds on PATH", () => {
      // x/bin/tool → ../lib/node_modules/tool/bin/tool.js, run by `env mynode`, found in y/bin (another installation).
      exe(join(t, "x", "lib", "node_modules", "tool", "bin", "tool.js"), "#!/usr/bin/env -S mynode --no-warnings\n");
      mkdirSync(join(t, "x", "bin"), { recursive: true });
      symlinkSync("../lib/node_modules/tool/bin/tool.js", join(t, "x", "bin", "tool"));
      mkdirSync(join(t, "y", "bin"), { recursive: true });
      symlinkSync(process.execPath, join(t, "y", "bin", "mynode"));
      const got = programBinds(box(), join(t, "x", "bin", "tool"), `${join(t, "x", "bin")}:${join(t, "y", "bin")}:/usr/bin:/bin`);
      expect(got).toEqual([join(t, "x"), join(t, "y")]);
      // After the masks, before the worktree's writable bind.
      const a = boxed(box(), join(t, "x", "bin", "tool"), [], got).args;
      expect(a.indexOf(join(t, "x"))).toBeGreaterThan(a.indexOf(t));
      expect(a.indexOf(join(t, "y"))).toBeLessThan(a.indexOf(join(root, "tree")));
      expect(a.slice(a.indexOf(join(t, "x")) - 1, a.indexOf(join(t, "x")) + 2)).toEqual([
        "--ro-bind",
        join(t, "x"),
        join(t, "x"),
      ]);
    });

    it("puts back only the file when its folder is the hidden one, holds a place kept hidden, or holds a unix socket", async () => {
      exe(join(t, "alone"), "#!/bin/sh\n");
      expect(programBinds(box(), join(t, "alone"), "/usr/bin")).toEqual([join(t, "alone")]);
      exe(join(t, "w", "bin", "p"), "#!/bin/sh\n");
      mkdirSync(join(t, "w", "state"));
      expect(programBinds(box(), join(t, "w", "bin", "p"), "/usr/bin")).toEqual([join(t, "w", "bin", "p")]);
      exe(join(t, "s", "bin", "p"), "#!/bin/sh\n");
      const srv = createServer();
      await new Promise<void>((r) => srv.listen(join(t, "s", "agent.sock"), r));
      try {
        expect(programBinds(box(), join(t, "s", "bin", "p"), "/usr/bin")).toEqual([join(t, "s", "bin", "p")]);
      } finally {
        await new Promise((r) => srv.close(r));
      }
    });

    it("puts nothing back from a folder hidden for another reason, nor a program that is not hidden", () => {
      exe(join(root, "cred", "bin", "p"), "#!/bin/sh\n");
      expect(programBinds(box(), join(root, "cred", "bin", "p"), "/usr/bin")).toEqual([]);
      expect(programBinds(box(), "/bin/sh", "/usr/bin")).toEqual([]);
      // An older box (no programsFrom): nothing.
      const old = box();
      delete old.programsFrom;
      expect(programBinds(old, join(t, "alone"), "/usr/bin")).toEqual([]);
    });
  });
});
