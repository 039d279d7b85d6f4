/**
 * What `nodes add` runs on a host, over ssh, as argv. ssh joins the words after the host into one line that the
 * host's shell reads, so every remote command here is a constant script in single quotes; the only values put into
 * it are a SHA-256 (64 hex digits) and a version (digits, letters, dots, dashes, plus), both checked first. Nothing a
 * person typed becomes part of a remote command: the node's name stays here, the target and --ssh-opt values are
 * ssh's own arguments (before `--`), and the package goes through stdin.
 */
import { SessionError } from "../../core/errors.js";

/** `user@host`: a login name and a host name, IPv4 or bracket-less IPv6 address; never starting with `-`. */
const TARGET = /^([a-z_][a-z0-9_.-]{0,31})@([A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|[0-9A-Fa-f:]{2,39})$/;
/** An ssh -o option: Key=Value, printable, no spaces around the key. */
const SSH_OPT = /^[A-Za-z][A-Za-z0-9]{1,63}=[\x21-\x7e][\x20-\x7e]{0,1023}$/;
const SHA = /^[0-9a-f]{64}$/;
const VERSION = /^[0-9]+\.[0-9]+\.[0-9]+(?:[-+][0-9A-Za-z.+-]{1,64})?$/;

export function checkTarget(target: string): string {
  if (!TARGET.test(target))
    throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(target.slice(0, 100))} is not user@host`, {
      suggestion: "Give the node's login and address as user@host (a host name or an IP address).",
    });
  return target;
}

export function checkSshOpt(opt: string): string {
  if (!SSH_OPT.test(opt))
    throw new SessionError("INVALID_ARGUMENT", `--ssh-opt ${JSON.stringify(opt.slice(0, 100))} is not an ssh option`, {
      suggestion: "Give ssh -o options as Key=Value, e.g. --ssh-opt IdentityFile=/home/me/.ssh/node_key.",
    });
  return opt;
}

export function checkSha(sha: string): string {
  if (!SHA.test(sha))
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${JSON.stringify(sha.slice(0, 100))} is not a SHA-256 (64 lowercase hex digits)`,
      { suggestion: "Give --sha256 as printed by sha256sum." },
    );
  return sha;
}

export function checkVersion(v: string): string {
  if (!VERSION.test(v))
    throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(v.slice(0, 100))} is not a package version`, {
      suggestion: "The package's package.json must have a semver version.",
    });
  return v;
}

/** ssh argv to `target` with the operator's -o options, running `script` (a constant, single-quoted) with sh. */
export function sshArgv(target: string, opts: readonly string[], script?: string): string[] {
  if (script !== undefined && script.includes("'")) throw new Error("a remote script has no single quote");
  return ["ssh", ...opts.flatMap((o) => ["-o", o]), target, "--", ...(script === undefined ? [] : ["sh", "-c", `'${script}'`])];
}

/** Where a version is installed on a node, relative to its user's home (where ssh starts a command). */
export function installDir(version: string): string {
  return `.local/lib/claude-sessions/${checkVersion(version)}`;
}

/** The version the node runs: a link to the version's directory, switched by an install once it is complete. */
export const CURRENT = ".local/lib/claude-sessions/current/dist/bin.js";

/** The node's exec command for nodes.json: its current version run by the node's node. */
export function nodeExec(target: string, opts: readonly string[]): string[] {
  return [...sshArgv(target, opts), "node", CURRENT];
}

/** The ssh target and -o options of an exec command nodeExec wrote (undefined: not one of nodes add's). */
export function parseNodeExec(exec: readonly string[]): { target: string; opts: string[] } | undefined {
  if (
    exec[0] !== "ssh" ||
    exec.length < 5 ||
    exec[exec.length - 1] !== CURRENT ||
    exec[exec.length - 2] !== "node" ||
    exec[exec.length - 3] !== "--"
  )
    return undefined;
  const opts: string[] = [];
  let i = 1;
  for (; i < exec.length - 4; i += 2) {
    if (exec[i] !== "-o") return undefined;
    opts.push(exec[i + 1]!);
  }
  if (i !== exec.length - 4) return undefined;
  try {
    return { target: checkTarget(exec[i]!), opts: opts.map(checkSshOpt) };
  } catch {
    return undefined;
  }
}

/** Ends the node user's claude-sessions servers (their links reconnect, to the version `current` now names). */
export const RESTART_SCRIPT = 'pkill -TERM -u "$(id -u)" -f "claude-sessions/current/dist/bin.js" || true';

export function nodeAttach(target: string, opts: readonly string[]): string[] {
  return ["ssh", "-t", ...opts.flatMap((o) => ["-o", o]), target, "--"];
}

/** Prints one `key value` line per check; what the node says is parsed by parseChecks. */
export const CHECK_SCRIPT = [
  'printf "node %s\\n" "$(node --version 2>/dev/null || echo missing)"',
  'printf "tmux %s\\n" "$(tmux -V 2>/dev/null || echo missing)"',
  'printf "claude %s\\n" "$("${CLAUDE_PATH:-claude}" --version 2>/dev/null | head -n 1 || echo missing)"',
  'printf "memory %s\\n" "$(awk "/^MemAvailable:/ {print \\$2}" /proc/meminfo 2>/dev/null)"',
  'printf "platform %s\\n" "$(uname -sm)"',
].join("; ");

/**
 * Receives the package on stdin into ~/.cache/claude-sessions/pkg/, checks its SHA-256 there, and only when it is
 * the one expected unpacks it into a new directory that then becomes the version's directory. Exit 3: checksum
 * mismatch (nothing installed, the received file removed). Then `current` names that version.
 */
export function installScript(sha: string, version: string): string {
  const dir = installDir(version);
  checkSha(sha);
  return [
    "set -eu",
    "umask 022",
    "c=.cache/claude-sessions/pkg",
    'mkdir -p "$c"',
    `t="$c/${sha}.tgz.part"`,
    'cat > "$t"',
    `got=$(sha256sum "$t" | cut -d " " -f 1)`,
    `if [ "$got" != "${sha}" ]; then rm -f "$t"; echo "sha256 $got" >&2; exit 3; fi`,
    `mv "$t" "$c/${sha}.tgz"`,
    `p="${dir}"`,
    'mkdir -p "$(dirname "$p")"',
    'rm -rf "$p.new"',
    'mkdir "$p.new"',
    `tar -xzf "$c/${sha}.tgz" -C "$p.new" --strip-components=1 --no-same-owner`,
    `printf "%s\\n" "${sha}" > "$p.new/.sha256"`,
    'rm -rf "$p.old"',
    'if [ -e "$p" ]; then mv "$p" "$p.old"; fi',
    'mv "$p.new" "$p"',
    'rm -rf "$p.old"',
    'ln -sfn "$(basename "$p")" .local/lib/claude-sessions/current.new',
    "mv -T .local/lib/claude-sessions/current.new .local/lib/claude-sessions/current",
    "echo installed",
  ].join("; ");
}

export interface HostChecks {
  node?: string;
  tmux?: string;
  claude?: string;
  memoryKiB?: number;
  platform?: string;
}

export function parseChecks(out: string): HostChecks {
  const c: HostChecks = {};
  for (const line of out.split("\n")) {
    const m = /^(node|tmux|claude|memory|platform) (.*)$/.exec(line.trim());
    if (!m) continue;
    const v = m[2]!.trim().slice(0, 200);
    if (m[1] === "memory") {
      if (/^\d+$/.test(v)) c.memoryKiB = Number(v);
    } else if (v && v !== "missing") c[m[1] as "node" | "tmux" | "claude" | "platform"] = v;
  }
  return c;
}

/** Whether a `node --version` is one claude-sessions runs on (22.22+ or 24+). */
export function nodeVersionOk(v: string | undefined): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(v ?? "");
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj >= 24 || (maj === 22 && min >= 22);
}
