/**
 * The sandbox spec of one launch: what the server decided (every path absolute, every host checked) and hands the
 * session's launcher (sandbox/launcher.ts) in a 0600 file of the session's own directory. The launcher reads it,
 * deletes it, prepares the session's config folder, starts the sandbox runtime's proxies in itself and runs Claude
 * Code under bubblewrap. Nothing here is a secret: the values of the session's variables reach the launcher through
 * its environment, never the spec.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SandboxRuntimeConfig } from "@anthropic-ai/sandbox-runtime";
import type { SecretsSpec } from "./secrets.js";

export const SPEC_FILE = "sandbox.json";
/** The session's own Claude Code configuration folder (CLAUDE_CONFIG_DIR inside the sandbox), rebuilt at every launch. */
export const CONFIG_DIR = "claude-config";
/** The session's temporary folder (TMPDIR / CLAUDE_CODE_TMPDIR inside the sandbox). */
export const TMP_DIR = "tmp";

export interface SandboxSpec {
  v: 1;
  /** Claude Code's argv (the binary first), run inside the sandbox; empty when it follows `--` on the launcher's command line (headless). */
  argv: string[];
  cwd: string;
  /** The session's directory (<state>/<id>): its config and temp folders live there. */
  sessionDir: string;
  /** The user's real Claude configuration folder (CLAUDE_CONFIG_DIR or ~/.claude) and main config file. */
  realConfigDir: string;
  realConfigFile: string;
  /** Copy the login (.credentials.json) into the session's config: it has no API key or token of its own. */
  copyCredentials: boolean;
  /** host / host:port / *.domain / IP literals the proxy lets through. */
  allowHosts: string[];
  /** Folders and files it may write besides cwd and its own folders. */
  allowWrite: string[];
  denyRead: string[];
  /** Re-allowed inside a denied folder (the server's scripts, the session's own folder, its cwd). */
  allowRead: string[];
  /** bubblewrap, socat and ripgrep by absolute path (the server's): a session's PATH never picks what runs outside. */
  tools: { bwrap: string; socat: string; rg: string };
  /** What to mask and where each secret may go (sandbox/secrets.ts); absent: nothing is masked (an older server's spec). */
  secrets?: SecretsSpec | undefined;
  /** Where the launcher appends its cs:sandbox_violation events, through the hooks' own locked path (flock, paste by absolute path). */
  events?: { path: string; flock: string; paste: string } | undefined;
}

/** Claude Code's folder for a cwd's transcripts (its own rule: every character but a letter or digit becomes `-`). */
export function projectFolder(configDir: string, cwd: string): string {
  return join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
}

/** The credential places every sandboxed session is kept from reading, under the user's home. */
export function credentialPaths(home: string): string[] {
  return [
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".docker",
    ".kube",
    ".netrc",
    ".doppler",
    ".config/doppler",
    ".git-credentials",
    ".config/gh",
  ].map((p) => join(home, p));
}

/**
 * The user's Claude configuration a session must never change, whatever its cwd (one at or above the home folder
 * would otherwise make them writable): hooks, trust records, commands and plugins there run outside the sandbox later.
 */
export function protectedConfig(s: Pick<SandboxSpec, "realConfigDir" | "realConfigFile">): string[] {
  const inDir = [
    "settings.json",
    "settings.local.json",
    ".credentials.json",
    "CLAUDE.md",
    "commands",
    "agents",
    "hooks",
    "plugins",
    "skills",
    "output-styles",
  ];
  return [s.realConfigFile, ...inDir.map((f) => join(s.realConfigDir, f))];
}

function under(path: string, root: string): boolean {
  const r = root.endsWith("/") ? root : `${root}/`;
  return path === root || path.startsWith(r);
}

/**
 * The sandbox runtime's configuration for a spec. The user's config is denied for writing where it exists (a bind
 * over the file), and where it does not only if a write root covers it: the runtime holds a missing path with a mount
 * point on the host, an empty file the user's own unsandboxed Claude Code would then read.
 */
export function runtimeConfig(s: SandboxSpec, exists: (p: string) => boolean = existsSync): SandboxRuntimeConfig {
  const own = [s.cwd, join(s.sessionDir, CONFIG_DIR), join(s.sessionDir, TMP_DIR), projectFolder(s.realConfigDir, s.cwd)];
  const roots = [...own, ...s.allowWrite];
  return {
    bwrapPath: s.tools.bwrap,
    socatPath: s.tools.socat,
    ripgrep: { command: s.tools.rg },
    network: { allowedDomains: [...s.allowHosts], deniedDomains: [] },
    filesystem: {
      denyRead: [...s.denyRead],
      allowRead: [...s.allowRead],
      allowWrite: [...own, ...s.allowWrite],
      denyWrite: protectedConfig(s).filter((p) => exists(p) || roots.some((r) => under(p, r))),
    },
  };
}

export function encodeSpec(s: SandboxSpec): string {
  return JSON.stringify(s) + "\n";
}

/** The spec a launcher was handed; throws on anything that is not one. */
export function decodeSpec(text: string): SandboxSpec {
  const s = JSON.parse(text) as Partial<SandboxSpec>;
  const strs = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  if (
    s?.v !== 1 ||
    !strs(s.argv) ||
    typeof s.cwd !== "string" ||
    typeof s.sessionDir !== "string" ||
    typeof s.realConfigDir !== "string" ||
    typeof s.realConfigFile !== "string"
  ) {
    throw new Error("not a sandbox spec");
  }
  if (!strs(s.allowHosts) || !strs(s.allowWrite) || !strs(s.denyRead) || !strs(s.allowRead))
    throw new Error("not a sandbox spec");
  if (s.secrets !== undefined) {
    const x = s.secrets;
    if (
      !strs(x.envNames) ||
      (x.dopplerBase !== undefined && !strs(x.dopplerBase)) ||
      !Array.isArray(x.rules) ||
      !x.rules.every((r) => typeof r?.pattern === "string" && strs(r.hosts))
    )
      throw new Error("not a sandbox spec");
    if (
      typeof x.api?.host !== "string" ||
      typeof x.api.port !== "number" ||
      typeof x.api.plaintext !== "boolean" ||
      (x.caFile !== undefined && typeof x.caFile !== "string")
    )
      throw new Error("not a sandbox spec");
  }
  if (
    s.events !== undefined &&
    ![s.events.path, s.events.flock, s.events.paste].every((x) => typeof x === "string" && x.startsWith("/"))
  )
    throw new Error("not a sandbox spec");
  const t = s.tools;
  if (!t || ![t.bwrap, t.socat, t.rg].every((x) => typeof x === "string" && x.startsWith("/")))
    throw new Error("not a sandbox spec");
  return s as SandboxSpec;
}
