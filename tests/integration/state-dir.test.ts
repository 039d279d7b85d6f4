/**
 * Issue #19, item 7: the state directory is resolved once at start (its real path) and the way to it must be safe.
 * A link naming it that is pointed elsewhere after start-up changes nothing; a parent that others can write (and
 * is not sticky) or that belongs to another user stops the server with the fix named.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, connect, makeWorld, tmuxOrSkip, type Mcp, type World } from "../helpers/harness.js";

const TMUX = tmuxOrSkip();
const ROOT = process.getuid?.() === 0;

const runLs = (stateDir: string, home: string) =>
  spawnSync(process.execPath, [CLI, "ls"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: home, CLAUDE_SESSIONS_DIR: stateDir, CLAUDE_SESSIONS_TMUX_SOCKET: "cs-test-none" },
  });

describe("the way to the state directory is safe or the server stops", () => {
  it("a parent that others may write and that is not sticky is refused; a sticky one (like /tmp) is fine", () => {
    const w = makeWorld();
    try {
      const parent = w.dir("shared");
      chmodSync(parent, 0o777);
      const r = runLs(join(parent, "state"), w.home);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`its parent ${parent} is not safe`);
      expect(r.stderr).toContain("not sticky");
      expect(r.stderr).toContain("CLAUDE_SESSIONS_DIR");
      chmodSync(parent, 0o1777);
      expect(runLs(join(parent, "state"), w.home).status).toBe(0);
    } finally {
      w.cleanup();
    }
  });

  it.runIf(ROOT)("a parent that belongs to another user is refused", () => {
    const w = makeWorld();
    try {
      const parent = w.dir("theirs");
      chownSync(parent, 65534, 65534);
      chmodSync(parent, 0o755);
      const r = runLs(join(parent, "state"), w.home);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain("belongs to uid 65534");
    } finally {
      w.cleanup();
    }
  });
});

describe.runIf(TMUX)("a link naming the state directory, pointed elsewhere after start-up (tmux, fake claude)", () => {
  let w: World;
  let m: Mcp;
  let real: string;
  let other: string;
  let link: string;
  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    real = w.dir("real-state");
    other = w.dir("other-state");
    link = join(w.root, "state-link");
    symlinkSync(real, link);
    m = await connect(w, { CLAUDE_SESSIONS_DIR: link });
  });
  afterAll(async () => {
    await m?.close();
    w?.cleanup();
  });

  it("changes nothing: the server keeps using the directory it resolved at start", async () => {
    expect(existsSync(join(real, "bin", "permission.sh"))).toBe(true);
    // Another user's directory, with their scripts in it, now named by the link.
    mkdirSync(join(other, "bin"), { recursive: true });
    unlinkSync(link);
    symlinkSync(other, link + ".new");
    renameSync(link + ".new", link);
    const s = await m.callOk("start_session", { cwd: w.dir("work") });
    const settings = readFileSync(join(real, s.session_id, "settings.json"), "utf8");
    expect(settings).toContain(join(real, "bin", "permission.sh"));
    expect(settings).not.toContain(link);
    expect(readdirSync(other)).toEqual(["bin"]);
    const r = await m.callOk("send_message", { session_id: s.session_id, message: "hello" });
    expect(r.response).toBe("FAKE REPLY: hello");
  });
});
