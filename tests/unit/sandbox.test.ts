/**
 * The sandbox's pure parts (issue 32): host patterns and the caller's narrowing of the operator's list, the API's
 * host, the spec the launcher is handed and the runtime configuration made of it, the child's environment, and the
 * operator's switch.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { apiHost, formatHost, parseHost, parseHosts, widening } from "../../src/sandbox/hosts.js";
import { sandboxEnv } from "../../src/sandbox/prepare.js";
import { decodeSpec, encodeSpec, runtimeConfig, type SandboxSpec } from "../../src/sandbox/spec.js";
import { checkSandboxEnv, sandboxBlocker, sandboxFor, sandboxKey } from "../../src/sessions/launch/sandbox.js";
import { WarmPool } from "../../src/sessions/launch/warm-pool.js";

const spec: SandboxSpec = {
  v: 1,
  argv: ["/usr/bin/claude", "--session-id=x"],
  cwd: "/work/p",
  sessionDir: "/state/s1",
  realConfigDir: "/home/u/.claude",
  realConfigFile: "/home/u/.claude.json",
  copyCredentials: false,
  allowHosts: ["127.0.0.1:8080", "*.example.org"],
  allowWrite: ["/state/s1/events.jsonl"],
  denyRead: ["/home/u/.ssh", "/state"],
  allowRead: ["/state/bin"],
  tools: { bwrap: "/usr/bin/bwrap", socat: "/usr/bin/socat", rg: "/usr/bin/rg" },
};

describe("host patterns", () => {
  it("accepts host, host:port, *.domain, IP literals; refuses the rest with the entry named", () => {
    for (const ok of [
      "api.example.com",
      "api.example.com:443",
      "*.example.org",
      "*.example.org:8443",
      "127.0.0.1:8080",
      "[::1]:443",
      "localhost",
    ]) {
      expect(typeof parseHost(ok), ok).toBe("object");
    }
    for (const bad of [
      "",
      "http://x.com",
      "x.com/path",
      "*.com",
      "a b.com",
      "x.com:0",
      "x.com:70000",
      "300.1.1.1",
      "-x.com",
      "*",
      "x.com:",
    ]) {
      expect(typeof parseHost(bad), JSON.stringify(bad)).toBe("string");
    }
    expect(() => parseHosts(["ok.com", "bad/one"], "CLAUDE_SESSIONS_SANDBOX_HOSTS")).toThrow(
      /CLAUDE_SESSIONS_SANDBOX_HOSTS: "bad\/one"/,
    );
  });

  it("a caller may narrow the operator's list, never widen it", () => {
    const op = parseHosts(["*.example.org", "api.github.com:443", "10.0.0.5"], "op");
    expect(widening(op, parseHosts(["a.example.org", "*.b.example.org:443", "api.github.com:443", "10.0.0.5:22"], "c"))).toEqual(
      [],
    );
    expect(
      widening(op, parseHosts(["example.org", "api.github.com", "api.github.com:80", "evil.com", "*.x.example.com"], "c")).map(
        formatHost,
      ),
    ).toEqual(["example.org", "api.github.com", "api.github.com:80", "evil.com", "*.x.example.com"]);
  });

  it("the API's host comes from ANTHROPIC_BASE_URL (the mock's IP literal and port), else api.anthropic.com:443", () => {
    expect(formatHost(apiHost("http://127.0.0.1:36301"))).toBe("127.0.0.1:36301");
    expect(formatHost(apiHost("https://gw.example.com/v1"))).toBe("gw.example.com:443");
    expect(formatHost(apiHost(undefined))).toBe("api.anthropic.com:443");
    expect(formatHost(apiHost("not a url"))).toBe("api.anthropic.com:443");
  });
});

describe("the launcher's spec", () => {
  it("round-trips, and anything else is refused", () => {
    expect(decodeSpec(encodeSpec(spec))).toEqual(spec);
    expect(() => decodeSpec(JSON.stringify({ ...spec, argv: "claude" }))).toThrow(/not a sandbox spec/);
    expect(decodeSpec(JSON.stringify({ ...spec, argv: [] })).argv).toEqual([]);
    expect(() => decodeSpec(JSON.stringify({ ...spec, v: 2 }))).toThrow(/not a sandbox spec/);
    expect(() => decodeSpec("{")).toThrow();
    // The programs that run outside the sandbox are absolute paths: never looked up on a session's PATH.
    expect(() => decodeSpec(JSON.stringify({ ...spec, tools: { ...spec.tools, bwrap: "bwrap" } }))).toThrow(/not a sandbox spec/);
    expect(runtimeConfig(spec, () => false)).toMatchObject({
      bwrapPath: "/usr/bin/bwrap",
      socatPath: "/usr/bin/socat",
      ripgrep: { command: "/usr/bin/rg" },
    });
  });

  it("writes: cwd, the session's config and temp folders, its transcript folder and what the spec adds; the allowlist as given", () => {
    const c = runtimeConfig(spec, () => false);
    expect(c.filesystem.allowWrite).toEqual([
      "/work/p",
      "/state/s1/claude-config",
      "/state/s1/tmp",
      "/home/u/.claude/projects/-work-p",
      "/state/s1/events.jsonl",
    ]);
    expect(c.filesystem.denyRead).toEqual(["/home/u/.ssh", "/state"]);
    // Never writable, even for a session whose cwd is the home folder: the user's config and main file, denied where
    // they exist; where they do not, only when a write root covers them (else a host-side mount point would appear).
    const there = new Set(["/home/u/.claude.json", "/home/u/.claude/settings.json"]);
    expect(runtimeConfig(spec, (p) => there.has(p)).filesystem.denyWrite).toEqual([
      "/home/u/.claude.json",
      "/home/u/.claude/settings.json",
    ]);
    const home = runtimeConfig({ ...spec, cwd: "/home/u" }, (p) => there.has(p)).filesystem.denyWrite;
    expect(home).toEqual(
      expect.arrayContaining([
        "/home/u/.claude.json",
        "/home/u/.claude/settings.json",
        "/home/u/.claude/hooks",
        "/home/u/.claude/plugins",
        "/home/u/.claude/settings.local.json",
      ]),
    );
    expect(c.network.allowedDomains).toEqual(["127.0.0.1:8080", "*.example.org"]);
  });

  it("the child's environment keeps the session's variables, drops DOPPLER_* and the server's own, points at its folders", () => {
    const env = sandboxEnv(
      {
        PATH: "/bin",
        API_TOKEN: "v",
        DOPPLER_TOKEN: "dp",
        DOPPLER_PROJECT: "p",
        CLAUDE_SESSIONS_DIR: "/state",
        CLAUDE_SESSIONS_ID: "s1",
        CLAUDE_SESSIONS_MEMBER_SECRET: "m",
      },
      spec,
    );
    expect(env).toEqual({
      PATH: "/bin",
      API_TOKEN: "v",
      CLAUDE_SESSIONS_ID: "s1",
      CLAUDE_SESSIONS_MEMBER_SECRET: "m",
      CLAUDE_CONFIG_DIR: "/state/s1/claude-config",
      CLAUDE_CODE_TMPDIR: "/state/s1/tmp",
      IS_SANDBOX: "1",
    });
  });
});

describe("the operator's switch", () => {
  const cfg = (env: Record<string, string>) => loadConfig({ HOME: "/h", ...env });
  it("CLAUDE_SESSIONS_SANDBOX is off, on or required; anything else stops the server", () => {
    expect(cfg({}).sandbox).toBe("off");
    expect(cfg({ CLAUDE_SESSIONS_SANDBOX: "ON" }).sandbox).toBe("on");
    expect(() => cfg({ CLAUDE_SESSIONS_SANDBOX: "yes" })).toThrow(/CLAUDE_SESSIONS_SANDBOX must be off, on, required/);
  });

  it("off: none unless asked; on: unless refused; required: refusing is INVALID_ARGUMENT", () => {
    expect(sandboxFor(cfg({}), undefined)).toBeUndefined();
    expect(sandboxFor(cfg({ CLAUDE_SESSIONS_SANDBOX: "on" }), false)).toBeUndefined();
    expect(() => sandboxFor(cfg({ CLAUDE_SESSIONS_SANDBOX: "required" }), false)).toThrow(/CLAUDE_SESSIONS_SANDBOX=required/);
    expect(sandboxKey(cfg({ CLAUDE_SESSIONS_SANDBOX: "on" }), undefined)).toBe(true);
    expect(sandboxKey(cfg({}), undefined)).toBe(false);
  });

  it("a bad operator list or a widening caller is refused before anything else is looked at", () => {
    expect(() => sandboxFor(cfg({ CLAUDE_SESSIONS_SANDBOX_HOSTS: "ok.com,http://bad" }), true)).toThrow(
      expect.objectContaining({ code: "SANDBOX_UNAVAILABLE" }),
    );
    expect(() => sandboxFor(cfg({ CLAUDE_SESSIONS_SANDBOX_HOSTS: "*.example.org" }), { allow_hosts: ["evil.com"] })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
    expect(() => sandboxFor(cfg({}), true, "a headless session")).toThrow(
      expect.objectContaining({ code: "SANDBOX_UNAVAILABLE" }),
    );
    expect(sandboxBlocker({ kind: "remote", caps: { sandbox: false } })).toBe("a remote session");
    expect(sandboxBlocker({ kind: "tmux", caps: { sandbox: true } })).toBeUndefined();
  });

  it("a caller's env may not reach the launcher outside the sandbox: NODE_OPTIONS, LD_* and the like are refused", () => {
    for (const k of [
      "PATH",
      "HOME",
      "NODE_OPTIONS",
      "NODE_PATH",
      "LD_PRELOAD",
      "LD_LIBRARY_PATH",
      "DYLD_INSERT_LIBRARIES",
      "NODE_EXTRA_CA_CERTS",
      "CLAUDE_SESSIONS_MEMBER_SOCKET",
    ]) {
      expect(() => checkSandboxEnv({ [k]: "x" }), k).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    }
    expect(() => checkSandboxEnv({ API_TOKEN: "x", MY_NODE_OPTIONS: "y" })).not.toThrow();
  });

  it("the warm pool's key has the sandbox with the operator's default applied: a sandboxed start never takes an unsandboxed spare", () => {
    const base = { cwd: "/w/a", backend: "tmux" as const };
    const key = (env: Record<string, string>, sandbox?: boolean) =>
      WarmPool.keyOf({ ...base, sandbox: sandboxKey(cfg(env), sandbox) })!.key;
    expect(key({}, true)).not.toBe(key({}));
    expect(key({}, false)).toBe(key({}));
    // The same call under "on" is a sandboxed one: the key says so, whichever server started the spare.
    expect(key({ CLAUDE_SESSIONS_SANDBOX: "on" })).toBe(key({}, true));
  });
});
