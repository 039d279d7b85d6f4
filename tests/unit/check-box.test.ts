/**
 * The box a sandboxed session's checks run in (issue 34): bubblewrap's argv — every namespace unshared (no network),
 * the masks before the worktree's writable bind, the check's own argv after `--` as it is (never through a shell) —
 * and what checkBox hides on this machine: /tmp (a test HOME and state directory live there, so they are hidden with
 * it, not masked twice); a worktree's git folder (the repository's, under /tmp) put back read-only.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { boxed } from "../../src/sandbox/check-box.js";
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
});
