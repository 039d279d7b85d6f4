/** Checks of a call's arguments and of the server's limits, before anything is spawned or stored. */
import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { findClaude, findOnPath } from "../claude/discover.js";
import type { Config } from "../config.js";
import { SessionError } from "../core/errors.js";
import { isLive, type Status } from "../core/status.js";
import { preparePromptFor } from "../runners/prompt.js";
import type { Capabilities } from "../runners/runner.js";
import type { SessionRecord } from "../store/schema.js";
import { ENV_NAME } from "../util/proc/env.js";
import { checkEnvNames } from "./gates.js";

/**
 * A prompt as its runner will deliver it, or INVALID_ARGUMENT / PERMISSION_DENIED (runners/prompt.ts): the rules
 * of `caps.prompts` (a headless session's message holds what the terminal must refuse). Without a runner (the
 * session's is not known yet, Claude Code's own background sessions) the input box's rules, which refuse more.
 */
/** The rules every runner applies (a message's): checked before the session, and so its runner, is known. */
export const ANY_RUNNER: Pick<Capabilities, "prompts"> = { prompts: "message" };

export function checkPrompt(
  cfg: Config,
  m: string,
  what: string,
  bashMode?: boolean,
  caps?: Pick<Capabilities, "prompts">,
): string {
  return preparePromptFor(caps?.prompts ?? "input-box", m, {
    maxChars: cfg.maxMessageChars,
    allowBashMode: cfg.allowBashMode,
    what,
    ...(bashMode ? { bashMode } : {}),
  });
}

/** MAX_CONCURRENT_SESSIONS, checked under the store's lock (`except`: the session being resumed). */
export function assertRoom(cfg: Config, sessions: Record<string, SessionRecord>, except?: string): void {
  const live = Object.values(sessions).filter((r) => isLive(r.status) && r.session_id !== except).length;
  if (live >= cfg.maxSessions) {
    throw new SessionError(
      "LIMIT_REACHED",
      `${live} sessions are running; the limit is ${cfg.maxSessions} (MAX_CONCURRENT_SESSIONS).`,
    );
  }
}

export function checkUsable(r: SessionRecord, status: Status): void {
  if (status === "dead" || status === "zombie") throw new SessionError("SESSION_DEAD", `session ${r.session_id} is ${status}.`);
  if (status === "error")
    throw new SessionError("SESSION_DEAD", `session ${r.session_id} failed to start: ${r.error_log.at(-1) ?? "unknown reason"}`);
  if (status === "starting") throw new SessionError("SESSION_NOT_READY", `session ${r.session_id} is still starting.`);
}

/** A caller's env: valid names and values, and none that chooses what runs unless the operator allows it (gates.ts). */
export function checkEnv(cfg: Config, env: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env ?? {})) {
    if (!ENV_NAME.test(k))
      throw new SessionError("INVALID_ARGUMENT", `env name ${JSON.stringify(k)} is not a valid variable name.`);
    if (typeof v !== "string" || v.includes("\0"))
      throw new SessionError("INVALID_ARGUMENT", `env ${k} must be a string without NUL characters.`);
    out[k] = v;
  }
  checkEnvNames(cfg, out);
  return out;
}

/**
 * bypassPermissions needs CLAUDE_SESSIONS_ALLOW_BYPASS=1, or =sandboxed for a sandboxed session. A sandboxed session
 * runs with IS_SANDBOX=1 (sandbox/prepare.ts), so Claude Code takes bypass there even as root.
 */
export function checkPermissionMode(cfg: Config, mode: string | undefined, sandboxed = false): void {
  if (mode !== "bypassPermissions") return;
  if (!cfg.allowBypassPermissions && !(sandboxed && cfg.allowBypassSandboxed)) {
    throw new SessionError(
      "PERMISSION_DENIED",
      `permission_mode bypassPermissions is refused by this server${cfg.allowBypassSandboxed ? " for a session outside the sandbox" : ""}.`,
      {
        suggestion: cfg.allowBypassSandboxed
          ? "Start it with sandbox: true (CLAUDE_SESSIONS_ALLOW_BYPASS=sandboxed allows bypass only in the sandbox)."
          : "Start the server with CLAUDE_SESSIONS_ALLOW_BYPASS=1 (or =sandboxed: only sandboxed sessions) to allow it (as " +
            "root, Claude Code also needs IS_SANDBOX=1).",
      },
    );
  }
  if (!sandboxed && process.getuid?.() === 0 && process.env.IS_SANDBOX !== "1") {
    throw new SessionError("PERMISSION_DENIED", "Claude Code refuses bypassPermissions as root unless IS_SANDBOX=1 is set.", {
      suggestion:
        "Run the server as a normal user, or set IS_SANDBOX=1 in the server's environment if this machine is a sandbox.",
    });
  }
}

export async function checkCwd(dir: string, what = "cwd"): Promise<string> {
  if (typeof dir !== "string" || !dir.trim()) throw new SessionError("INVALID_ARGUMENT", `${what} is empty.`);
  if (dir.includes("\0")) throw new SessionError("INVALID_ARGUMENT", `${what} contains a NUL character.`);
  const abs = resolve(dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir);
  const st = await stat(abs).catch(() => undefined);
  if (!st?.isDirectory())
    throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(dir)} is not an existing directory.`);
  return abs;
}

export function claudeBinary(cfg: Config): string {
  const found = findClaude(cfg.claudePath);
  if (!found.path) {
    throw new SessionError("CLAUDE_NOT_FOUND", `the claude binary was not found. Looked in: ${found.searched.join(", ")}`, {
      details: { searched: found.searched },
    });
  }
  return found.path;
}

export interface DopplerChoice {
  path: string;
  project?: string;
  config?: string;
}

const DOPPLER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function dopplerFor(
  cfg: Config,
  d: { project?: string | undefined; config?: string | undefined } | undefined,
): DopplerChoice | undefined {
  if (!d) return undefined;
  const project = d.project ?? cfg.dopplerProject;
  const config = d.config ?? cfg.dopplerConfig;
  for (const [k, v] of [
    ["project", project],
    ["config", config],
  ] as const) {
    if (v !== undefined && !DOPPLER_NAME.test(v))
      throw new SessionError("INVALID_ARGUMENT", `doppler ${k} ${JSON.stringify(v)} is not a valid Doppler name.`);
  }
  const found = findOnPath("doppler", cfg.dopplerPath);
  if (!found.path) {
    throw new SessionError(
      "DOPPLER_ERROR",
      `the doppler CLI was not found (${cfg.dopplerPath ? `DOPPLER_PATH=${cfg.dopplerPath}` : "not on PATH"}).`,
      {
        suggestion: "Install the Doppler CLI (https://docs.doppler.com/docs/install-cli) or set DOPPLER_PATH.",
      },
    );
  }
  return { path: found.path, ...(project ? { project } : {}), ...(config ? { config } : {}) };
}

/** The Doppler project/config a session was started with, for resume_session to wrap it again. */
export function storedDoppler(r: SessionRecord): { project?: string; config?: string } | undefined {
  if (!r.doppler_project && !r.doppler_config) return undefined;
  return {
    ...(r.doppler_project ? { project: r.doppler_project } : {}),
    ...(r.doppler_config ? { config: r.doppler_config } : {}),
  };
}
