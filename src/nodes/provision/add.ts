/**
 * `claude-sessions nodes add NAME user@host`: checks the host over ssh (node ≥ 22.22, tmux, claude, free memory,
 * platform), sends it this exact claude-sessions (pack.ts) over the same kind of ssh connection — on the stdin of a
 * constant remote script that checks the SHA-256 on the host before it unpacks anything (remote.ts) — into
 * ~/.local/lib/claude-sessions/<version>, checks that the installed server starts there, and writes the node's
 * entry to nodes.json. Every refusal is a typed error and leaves nodes.json as it was.
 */
import { spawn, spawnSync } from "node:child_process";
import { openSync, closeSync, statSync } from "node:fs";
import { SessionError } from "../../core/errors.js";
import { badName } from "../config.js";
import { nodeExists, taken, writeNodeEntry } from "./nodes-file.js";
import { packSelf, sha256File, type Packed } from "./pack.js";
import {
  checkSha,
  checkSshOpt,
  checkTarget,
  checkVersion,
  CHECK_SCRIPT,
  installDir,
  installScript,
  nodeAttach,
  nodeExec,
  nodeVersionOk,
  parseChecks,
  sshArgv,
  type HostChecks,
} from "./remote.js";

export interface AddOptions {
  name: string;
  target: string;
  sshOpts: string[];
  replace: boolean;
  /** A packed tarball to send instead of this installation, and the SHA-256 it must have. */
  packageFile?: string;
  sha256?: string;
  nodesFile: string | undefined;
  stateDir: string;
  /** One line of progress for the operator. */
  say(line: string): void;
}

export interface AddResult {
  name: string;
  version: string;
  sha256: string;
  installedAt: string;
  nodesPath: string;
  checks: HostChecks;
}

const CHECK_MS = 60_000;
const INSTALL_MS = 15 * 60_000;

function sshFailed(target: string, what: string, r: { status: number | null; stderr: string; error?: Error }): SessionError {
  const why = (r.error?.message ?? r.stderr).trim().slice(-500) || `exit ${r.status}`;
  return new SessionError("NODE_UNREACHABLE", `${target}: ${what} over ssh failed: ${why}`, {
    suggestion: "Check that `ssh user@host true` works with the same --ssh-opt options (key, known host) and try again.",
  });
}

/** This machine as `uname -sm` says it (Linux aarch64, Darwin arm64, … x86_64). */
function localPlatform(): string {
  const os = process.platform === "linux" ? "Linux" : process.platform === "darwin" ? "Darwin" : process.platform;
  const arch = process.arch === "x64" ? "x86_64" : process.arch === "arm64" && os === "Linux" ? "aarch64" : process.arch;
  return `${os} ${arch}`;
}

/** The host's checks, each reported; throws on the first that makes the host unusable. */
export function checkHost(target: string, sshOpts: string[], say: (l: string) => void): HostChecks {
  const argv = sshArgv(target, sshOpts, CHECK_SCRIPT);
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", timeout: CHECK_MS, stdio: ["ignore", "pipe", "pipe"] });
  if (r.status !== 0) throw sshFailed(target, "checking the host", r);
  const c = parseChecks(r.stdout);
  const local = localPlatform();
  const rows: Array<[string, boolean, string]> = [
    [
      "node",
      nodeVersionOk(c.node),
      c.node ? `${c.node}${nodeVersionOk(c.node) ? "" : " (needs 22.22 or later)"}` : "not found on the PATH of an ssh command",
    ],
    ["tmux", c.tmux !== undefined, c.tmux ?? "not found"],
    ["claude", c.claude !== undefined, c.claude ?? "not found (CLAUDE_PATH or PATH)"],
    [
      "memory",
      true,
      c.memoryKiB !== undefined
        ? `${Math.round(c.memoryKiB / 1024)} MiB available${c.memoryKiB < 1024 * 1024 ? " (less than 1 GiB: few sessions will fit)" : ""}`
        : "unknown",
    ],
    [
      "platform",
      c.platform === local,
      `${c.platform ?? "unknown"}${c.platform === local ? "" : ` (this machine: ${local}; the package's native parts are built for it)`}`,
    ],
  ];
  for (const [what, ok, detail] of rows) say(`${ok ? "ok  " : "FAIL"} ${what}: ${detail}`);
  const bad = rows.find(([, ok]) => !ok);
  if (bad) {
    const code = bad[0] === "claude" ? "CLAUDE_NOT_FOUND" : bad[0] === "tmux" ? "TMUX_NOT_FOUND" : "PROCESS_ERROR";
    throw new SessionError(code, `${target} is not ready for claude-sessions: ${bad[0]}: ${bad[2]}; nothing was installed`, {
      suggestion:
        "Fix the host (install what is missing where an ssh command finds it, e.g. via ~/.ssh/environment) and run nodes add again.",
    });
  }
  return c;
}

/** The version in a packed tarball's package/package.json. */
function versionOf(file: string): string {
  const r = spawnSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8", maxBuffer: 1 << 20 });
  try {
    return checkVersion(String((JSON.parse(r.stdout) as { version?: unknown }).version ?? ""));
  } catch {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${file} is not a packed claude-sessions (no package/package.json with a version in it)`,
      { suggestion: "Give --package a .tgz made by npm pack or by nodes add." },
    );
  }
}

/** Sends `file` on the stdin of the install script; resolves with the script's exit code and stderr. */
function sendPackage(
  target: string,
  sshOpts: string[],
  file: string,
  sha: string,
  version: string,
): Promise<{ code: number | null; stderr: string }> {
  const argv = sshArgv(target, sshOpts, installScript(sha, version));
  const fd = openSync(file, "r");
  return new Promise((ok, fail) => {
    const p = spawn(argv[0]!, argv.slice(1), { stdio: [fd, "ignore", "pipe"] });
    let stderr = "";
    p.stderr!.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4000)));
    const timer = setTimeout(() => p.kill("SIGTERM"), INSTALL_MS);
    p.on("error", (e) => {
      clearTimeout(timer);
      closeSync(fd);
      fail(e);
    });
    p.on("close", (code) => {
      clearTimeout(timer);
      closeSync(fd);
      ok({ code, stderr });
    });
  });
}

/**
 * Sends a package to the host on the install script's stdin (its SHA-256 checked there first), then checks that the
 * installed server answers with its version. Returns the node's exec command.
 */
export async function installOn(
  target: string,
  sshOpts: string[],
  pkg: { file: string; sha: string; version: string },
  say: (l: string) => void,
): Promise<string[]> {
  const { file, sha, version } = pkg;
  say(`sending it to ${target} (checked there before it is unpacked)`);
  const sent = await sendPackage(target, sshOpts, file, sha, version);
  if (sent.code === 3) {
    const got = /sha256 ([0-9a-f]{64})/.exec(sent.stderr)?.[1] ?? "another";
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${target} refused the package: its SHA-256 there is ${got}, not ${sha}; nothing was installed`,
      {
        suggestion:
          "The package changed on its way or is not the one you meant: check --package and --sha256 (sha256sum) and run nodes add again.",
      },
    );
  }
  if (sent.code !== 0) throw sshFailed(target, "installing the package", { status: sent.code, stderr: sent.stderr });
  const dir = installDir(version);
  say(`installed in ~/${dir}`);
  // The installed server starts there and is the version sent.
  const exec = nodeExec(target, sshOpts);
  const v = spawnSync(exec[0]!, [...exec.slice(1), "--version"], {
    encoding: "utf8",
    timeout: CHECK_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (v.status !== 0 || v.stdout.trim() !== version)
    throw new SessionError(
      "PROCESS_ERROR",
      `the installed claude-sessions on ${target} does not start: ${(v.stderr || v.stdout).trim().slice(-500)}`,
      {
        suggestion: `Run it by hand (ssh ${target} node ~/${dir}/dist/bin.js --version) to see why; nodes.json was not changed.`,
      },
    );
  say(`ok   claude-sessions ${version} answers on ${target}`);
  return exec;
}

export async function addNode(o: AddOptions): Promise<AddResult> {
  const why = badName(o.name);
  if (why)
    throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(o.name.slice(0, 64))} is not a node name: ${why}`, {
      suggestion: "A node name is letters, digits, - and _ (at most 32), and not local, auto or all.",
    });
  const target = checkTarget(o.target);
  const sshOpts = o.sshOpts.map(checkSshOpt);
  if (o.sha256 !== undefined && o.packageFile === undefined)
    throw new SessionError("INVALID_ARGUMENT", "--sha256 goes with --package", {
      suggestion: "Leave --sha256 out: this installation's package is checked against its own SHA-256.",
    });
  if (o.sha256 !== undefined) checkSha(o.sha256);
  if (o.packageFile !== undefined && !statSync(o.packageFile, { throwIfNoEntry: false })?.isFile())
    throw new SessionError("INVALID_ARGUMENT", `--package ${o.packageFile} is not a file`, {
      suggestion: "Give the path of a packed claude-sessions .tgz.",
    });
  // Before anything is sent: a name that is taken is refused here, and a nodes.json that cannot be read too.
  if (!o.replace && (await nodeExists(o.nodesFile, o.stateDir, o.name))) throw taken(o.name, "nodes.json");

  o.say(`checking ${target}`);
  const checks = checkHost(target, sshOpts, o.say);

  let packed: Packed | undefined;
  try {
    let file: string;
    let sha: string;
    let version: string;
    if (o.packageFile !== undefined) {
      file = o.packageFile;
      version = versionOf(file);
      sha = o.sha256 ?? (await sha256File(file));
    } else {
      o.say("packing this claude-sessions with its dependencies");
      packed = await packSelf();
      ({ path: file, sha256: sha, version } = packed);
      o.say(`packed claude-sessions ${version}: ${(packed.bytes / 1048576).toFixed(1)} MiB, sha256 ${sha}`);
    }
    const exec = await installOn(target, sshOpts, { file, sha, version }, o.say);
    const nodesPath = await writeNodeEntry(
      o.nodesFile,
      o.stateDir,
      o.name,
      { exec, attach: nodeAttach(target, sshOpts) },
      o.replace,
    );
    o.say(`node ${o.name} written to ${nodesPath}`);
    return { name: o.name, version, sha256: sha, installedAt: `~/${installDir(version)}`, nodesPath, checks };
  } finally {
    packed?.dispose();
  }
}
