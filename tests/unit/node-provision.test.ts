/**
 * What `nodes add` / `nodes upgrade` put on an ssh command line (issue 36 item 2): the target and -o options are
 * checked so none can be read as another ssh option, the remote scripts are constants in single quotes with only a
 * checked SHA-256 and version in them, and nodes.json entries are read back only in the form nodes add writes.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeNodeEntry } from "../../src/nodes/provision/nodes-file.js";
import {
  CHECK_SCRIPT,
  checkSha,
  checkSshOpt,
  checkTarget,
  checkVersion,
  installScript,
  nodeExec,
  nodeVersionOk,
  parseChecks,
  parseNodeExec,
  RESTART_SCRIPT,
  sshArgv,
} from "../../src/nodes/provision/remote.js";

const SHA = "a".repeat(64);

describe("nodes add: what reaches ssh", () => {
  it("a target is user@host and never an ssh option or shell text", () => {
    for (const ok of ["me@node1", "cs_1@10.0.0.2", "u@fd00::2", "a.b-c@host.example.com"]) expect(checkTarget(ok)).toBe(ok);
    for (const bad of [
      "-oProxyCommand=id",
      "u@-oProxyCommand=id",
      "u@h;id",
      "u@h id",
      "u@$(id)",
      "host",
      "@h",
      "u@",
      "u@h\n",
      "U@h",
    ]) {
      expect(() => checkTarget(bad)).toThrow(/is not user@host/);
    }
  });

  it("an --ssh-opt is Key=Value and cannot be another flag", () => {
    expect(checkSshOpt("IdentityFile=/k")).toBe("IdentityFile=/k");
    for (const bad of ["-F/dev/null", "=x", "Key", "K=\nx", "K= x", "K=x\0"])
      expect(() => checkSshOpt(bad)).toThrow(/not an ssh option/);
    expect(sshArgv("u@h", ["A=b"])).toEqual(["ssh", "-o", "A=b", "u@h", "--"]);
  });

  it("the remote scripts are single-quoted constants; only a checked sha and version go in", () => {
    for (const s of [CHECK_SCRIPT, RESTART_SCRIPT, installScript(SHA, "1.2.3")]) expect(s).not.toContain("'");
    expect(sshArgv("u@h", [], CHECK_SCRIPT).slice(-3)).toEqual(["sh", "-c", `'${CHECK_SCRIPT}'`]);
    expect(installScript(SHA, "1.2.3")).toBe(installScript("a".repeat(64), "1.2.3"));
    expect(() => installScript("A".repeat(64), "1.2.3")).toThrow(/SHA-256/);
    expect(() => installScript(`${"a".repeat(63)}'`, "1.2.3")).toThrow(/SHA-256/);
    expect(() => installScript(SHA, "1.2.3; rm -rf ~")).toThrow(/version/);
    expect(() => checkVersion("1.2")).toThrow();
    expect(checkSha(SHA)).toBe(SHA);
  });

  it("reads the host's answers and node versions", () => {
    expect(parseChecks("node v24.1.0\ntmux tmux 3.3a\nclaude missing\nmemory 2048000\nplatform Linux x86_64\njunk\n")).toEqual({
      node: "v24.1.0",
      tmux: "tmux 3.3a",
      memoryKiB: 2048000,
      platform: "Linux x86_64",
    });
    expect([
      nodeVersionOk("v22.22.0"),
      nodeVersionOk("v24.0.1"),
      nodeVersionOk("v22.21.9"),
      nodeVersionOk("v20.19.0"),
      nodeVersionOk(undefined),
    ]).toEqual([true, true, false, false, false]);
  });

  it("an entry is upgraded only when it is in the form nodes add writes", () => {
    const exec = nodeExec("u@h", ["IdentityFile=/k", "BatchMode=yes"]);
    expect(parseNodeExec(exec)).toEqual({ target: "u@h", opts: ["IdentityFile=/k", "BatchMode=yes"] });
    expect(parseNodeExec(["ssh", "u@h", "--", "claude-sessions"])).toBeUndefined();
    expect(parseNodeExec(["ssh", "-t", "u@h", "--", "node", ".local/lib/claude-sessions/current/dist/bin.js"])).toBeUndefined();
    expect(
      parseNodeExec(["kubectl", "exec", "-i", "p", "--", "node", ".local/lib/claude-sessions/current/dist/bin.js"]),
    ).toBeUndefined();
  });

  it("an entry is added to nodes.json (made 0600 if missing), a taken name refused unless replace, the others kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-nodes-file-"));
    try {
      const file = join(dir, "nodes.json");
      const a = { exec: nodeExec("u@a", []) };
      expect(await writeNodeEntry(file, dir, "a", a, false)).toBe(file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      writeFileSync(
        file,
        JSON.stringify({ nodes: { a: a.exec ? a : {}, other: { exec: ["ssh", "o", "--", "claude-sessions"] } } }),
        { mode: 0o600 },
      );
      await expect(writeNodeEntry(file, dir, "a", { exec: nodeExec("u@b", []) }, false)).rejects.toMatchObject({
        code: "ALREADY_EXISTS",
      });
      expect(JSON.parse(readFileSync(file, "utf8")).nodes.a.exec).toContain("u@a");
      await writeNodeEntry(file, dir, "a", { exec: nodeExec("u@b", []) }, true);
      const nodes = JSON.parse(readFileSync(file, "utf8")).nodes;
      expect(nodes.a.exec).toContain("u@b");
      expect(nodes.other.exec).toEqual(["ssh", "o", "--", "claude-sessions"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
