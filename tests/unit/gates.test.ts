/**
 * The operator's gates (src/sessions/gates.ts) and what they read: Claude Code's folder-trust record
 * (src/claude/trust.ts), programs matched on their resolved path (src/util/proc/programs.ts), the env variables that
 * choose what runs.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isFolderTrusted, trustRecordFiles } from "../../src/claude/trust.js";
import { loadConfig } from "../../src/config.js";
import { SessionError } from "../../src/core/errors.js";
import { checkEnvNames, checkMcpServers, checkSetupCommand, refusedEnvEntry } from "../../src/sessions/gates.js";
import { isAllowedProgram, resolveProgram } from "../../src/util/proc/programs.js";

const root = mkdtempSync(join(tmpdir(), "cs-gates-"));
afterAll(() => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

function caught(f: () => unknown): SessionError | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof SessionError) return e;
    throw e;
  }
  return undefined;
}

describe("Claude Code's folder trust, read as the CLI reads it", () => {
  const home = join(root, "home");
  const work = join(root, "work");
  mkdirSync(home, { recursive: true });
  mkdirSync(join(work, "trusted", "deep", "er"), { recursive: true });
  mkdirSync(join(work, "other"), { recursive: true });
  symlinkSync(join(work, "trusted"), join(work, "link-to-trusted"));
  symlinkSync(join(work, "other"), join(work, "trusted", "link-to-other"));
  const write = (file: string, projects: Record<string, unknown>) => writeFileSync(file, JSON.stringify({ projects }));

  it("a folder is trusted when it or a folder above it has the accepted flag, on its real path", async () => {
    write(join(home, ".claude.json"), {
      [join(work, "trusted")]: { hasTrustDialogAccepted: true },
      [join(work, "other")]: { hasTrustDialogAccepted: false },
    });
    const env = { HOME: home };
    expect(await isFolderTrusted(join(work, "trusted"), env)).toBe(true);
    expect(await isFolderTrusted(join(work, "trusted", "deep", "er"), env)).toBe(true);
    expect(await isFolderTrusted(join(work, "link-to-trusted", "deep"), env)).toBe(true);
    // A worktree not made yet, below a trusted folder.
    expect(await isFolderTrusted(join(work, "trusted", "not-yet", "x"), env)).toBe(true);
    expect(await isFolderTrusted(join(work, "other"), env)).toBe(false);
    // A link inside a trusted folder to an untrusted one is the untrusted folder (the CLI works in its real path).
    expect(await isFolderTrusted(join(work, "trusted", "link-to-other"), env)).toBe(false);
    expect(await isFolderTrusted(join(work, "trusted", "link-to-other", "sub"), env)).toBe(false);
    expect(await isFolderTrusted(join(root, "state", "worktrees", "y"), env, join(work, "trusted", "link-to-other"))).toBe(false);
    expect(await isFolderTrusted(work, env)).toBe(false);
    expect(await isFolderTrusted("/", env)).toBe(false);
    // A worktree elsewhere counts as its repository, as the CLI keys a worktree's project by the repository's root.
    expect(await isFolderTrusted(join(root, "state", "worktrees", "x"), env, join(work, "trusted"))).toBe(true);
    expect(await isFolderTrusted(join(root, "state", "worktrees", "x"), env, join(work, "other"))).toBe(false);
  });

  it("CLAUDE_CONFIG_DIR moves the record; a missing or unreadable file trusts nothing; the legacy file counts when the main one is missing", async () => {
    const cfgDir = join(root, "cfg");
    mkdirSync(cfgDir, { recursive: true });
    expect(trustRecordFiles({ HOME: home, CLAUDE_CONFIG_DIR: cfgDir })).toEqual([
      join(cfgDir, ".claude.json"),
      join(cfgDir, ".config.json"),
    ]);
    expect(trustRecordFiles({ HOME: home })).toEqual([join(home, ".claude.json"), join(home, ".claude", ".config.json")]);
    expect(await isFolderTrusted(join(work, "trusted"), { HOME: home, CLAUDE_CONFIG_DIR: cfgDir })).toBe(false);
    write(join(cfgDir, ".config.json"), { [join(work, "other")]: { hasTrustDialogAccepted: true } });
    expect(await isFolderTrusted(join(work, "other"), { HOME: home, CLAUDE_CONFIG_DIR: cfgDir })).toBe(true);
    writeFileSync(join(cfgDir, ".claude.json"), "{not json");
    expect(await isFolderTrusted(join(work, "other"), { HOME: home, CLAUDE_CONFIG_DIR: cfgDir })).toBe(false);
    expect(await isFolderTrusted(join(work, "trusted"), { HOME: join(root, "nobody") })).toBe(false);
  });
});

describe("programs by their resolved path", () => {
  const bin = join(root, "bin");
  mkdirSync(bin, { recursive: true });
  const sh = resolveProgram("sh", process.env.PATH)!;
  const touch = resolveProgram("touch", process.env.PATH)!;

  it("a name is found on the absolute entries of PATH only; a relative path is never a program", () => {
    writeFileSync(join(bin, "tool"), "#!/bin/sh\n", { mode: 0o755 });
    expect(resolveProgram("tool", `relative:${bin}`)).toBe(join(bin, "tool"));
    expect(resolveProgram("tool", "bin")).toBeUndefined();
    expect(resolveProgram("./tool", bin)).toBeUndefined();
    expect(resolveProgram("missing-program", bin)).toBeUndefined();
    expect(sh).toMatch(/^\//);
  });

  it("a match is the same real file run by the same name: a link called touch that is sh is not touch", () => {
    symlinkSync(sh, join(bin, "touch"));
    expect(isAllowedProgram(join(bin, "touch"), ["touch"], process.env.PATH)).toBe(false);
    expect(isAllowedProgram(touch, ["touch"], process.env.PATH)).toBe(true);
    expect(isAllowedProgram(touch, [touch], process.env.PATH)).toBe(true);
    expect(isAllowedProgram(sh, ["touch", "bash"], process.env.PATH)).toBe(false);
    expect(isAllowedProgram(sh, [], process.env.PATH)).toBe(false);
  });

  it("setup_command: the listed program by its resolved path; the string form needs both switches", () => {
    const cfg = loadConfig({ CLAUDE_SESSIONS_SETUP_COMMANDS: "touch, sh" });
    expect(checkSetupCommand(cfg, ["touch", "x"])).toEqual({ file: touch, args: ["x"], shown: '["touch","x"]' });
    expect(caught(() => checkSetupCommand(cfg, "touch x"))?.suggestion).toContain("CLAUDE_SESSIONS_ALLOW_SETUP_SHELL=1");
    const shell = loadConfig({ CLAUDE_SESSIONS_SETUP_COMMANDS: "sh", CLAUDE_SESSIONS_ALLOW_SETUP_SHELL: "1" });
    expect(checkSetupCommand(shell, "touch x")).toMatchObject({ args: ["-c", "touch x"], shown: "touch x" });
    const noSh = loadConfig({ CLAUDE_SESSIONS_SETUP_COMMANDS: "touch", CLAUDE_SESSIONS_ALLOW_SETUP_SHELL: "1" });
    expect(caught(() => checkSetupCommand(noSh, "touch x"))?.code).toBe("PERMISSION_DENIED");
    expect(caught(() => checkSetupCommand(loadConfig({}), ["touch", "x"]))?.details).toEqual({
      variable: "CLAUDE_SESSIONS_SETUP_COMMANDS",
    });
  });

  it("mcp_servers: http/sse as given, a stdio server only with the switch or the list (then by its resolved path)", () => {
    const http = {
      a: { type: "http" as const, url: "http://127.0.0.1/mcp" },
      b: { type: "sse" as const, url: "http://127.0.0.1/sse" },
    };
    expect(checkMcpServers(loadConfig({}), http)).toEqual(http);
    expect(caught(() => checkMcpServers(loadConfig({}), { x: { command: "touch" } }))?.code).toBe("PERMISSION_DENIED");
    expect(checkMcpServers(loadConfig({ CLAUDE_SESSIONS_ALLOW_MCP_SERVERS: "1" }), { x: { command: "anything" } })).toEqual({
      x: { command: "anything" },
    });
    expect(
      checkMcpServers(loadConfig({ CLAUDE_SESSIONS_MCP_COMMANDS: "touch" }), { x: { command: "touch", args: ["y"] } }),
    ).toEqual({ x: { command: touch, args: ["y"] } });
  });
});

describe("env variables that choose what runs", () => {
  it("are refused unless the operator names them (exactly, or NAME_* for a prefix); identity-only GIT_ variables pass", () => {
    for (const k of [
      "PATH",
      "HOME",
      "LD_PRELOAD",
      "LD_LIBRARY_PATH",
      "DYLD_INSERT_LIBRARIES",
      "NODE_OPTIONS",
      "BASH_ENV",
      "ENV",
      "SHELL",
      "IFS",
      "CLAUDE_CONFIG_DIR",
      "CLAUDE_CODE_SHELL_PREFIX",
      "PYTHONPATH",
      "PYTHONSTARTUP",
      "GIT_CONFIG_GLOBAL",
      "GIT_SSH_COMMAND",
      "GIT_EXEC_PATH",
      "npm_config_script_shell",
      "NPM_CONFIG_SCRIPT_SHELL",
      "EDITOR",
      "XDG_CONFIG_HOME",
      "ANTHROPIC_BASE_URL",
      "HTTPS_PROXY",
      "https_proxy",
      "NODE_EXTRA_CA_CERTS",
    ]) {
      expect(refusedEnvEntry(k), k).toBeDefined();
      const e = caught(() => checkEnvNames(loadConfig({}), { [k]: "x" }));
      expect(e?.code, k).toBe("PERMISSION_DENIED");
      expect(e?.suggestion, k).toContain(`CLAUDE_SESSIONS_ALLOW_ENV=${k}`);
    }
    for (const k of ["GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL", "MY_TOKEN", "TERM", "ANTHROPIC_MODEL", "LANG", "Path"])
      expect(refusedEnvEntry(k), k).toBeUndefined();
    const cfg = loadConfig({ CLAUDE_SESSIONS_ALLOW_ENV: "PATH, LD_*" });
    expect(() => checkEnvNames(cfg, { PATH: "/x", LD_PRELOAD: "/y", LD_LIBRARY_PATH: "/z" })).not.toThrow();
    expect(caught(() => checkEnvNames(cfg, { NODE_OPTIONS: "x" }))?.code).toBe("PERMISSION_DENIED");
  });
});
