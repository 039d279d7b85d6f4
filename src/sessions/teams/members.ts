/**
 * What a team session's launch gets for its member server (issue 25): a fresh secret per process, in the session's
 * environment only (the tmux hand-off file, node-pty's env, the SDK's env — never argv); the MCP configuration
 * `<state>/<id>/member-mcp.json` that runs `claude-sessions member` and refers to the secret as
 * `${CLAUDE_SESSIONS_MEMBER_SECRET}` (Claude Code expands it from its own environment), its socket likewise (a
 * sandboxed session's launcher changes it to its relay, sandbox/member-relay.ts); and the secret's SHA-256 in
 * `<state>/<id>/member.sha256` (0600), which any server of the state directory checks a member's calls against, so
 * a restarted server still knows it. The member server is ours: its path is resolved here, never a caller's, so
 * CLAUDE_SESSIONS_ALLOW_MCP_SERVERS (the gate on callers' servers) does not apply.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MEMBER_ENV, MEMBER_SERVER_NAME } from "../../api/members.js";
import type { MemberLaunch } from "../../runners/runner.js";

export const MEMBER_CONFIG = "member-mcp.json";
export const MEMBER_HASH = "member.sha256";

/** The folder of the servers' member sockets: `<state>/sockets/<server pid>.sock`. */
export function socketDir(stateDir: string): string {
  return join(stateDir, "sockets");
}

export function socketPath(stateDir: string, pid = process.pid): string {
  return join(socketDir(stateDir), `${pid}.sock`);
}

/** This package's entry point (`dist/bin.js`), found from this module (dist/sessions/teams or src/sessions/teams). */
export function packageEntry(): string {
  return join(resolve(dirname(fileURLToPath(import.meta.url)), "../../.."), "dist", "bin.js");
}

const hashOf = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/** The member server of one launch of a team session: its variables, its configuration and the secret's hash. */
export function memberLaunch(
  stateDir: string,
  dir: string,
  id: string,
  lead: boolean,
): { env: Record<string, string>; member: MemberLaunch } {
  const secret = randomBytes(32).toString("base64url");
  const configPath = join(dir, MEMBER_CONFIG);
  const config = {
    mcpServers: {
      [MEMBER_SERVER_NAME]: {
        type: "stdio",
        command: process.execPath,
        // A small young generation, as the server's own (bin.ts): 70 MB resident instead of 78 MB (measured).
        args: ["--max-semi-space-size=1", packageEntry(), "member"],
        // Expanded by Claude Code from its environment: the file holds the variable's name, never the secret.
        env: {
          [MEMBER_ENV.secret]: `\${${MEMBER_ENV.secret}}`,
          [MEMBER_ENV.session]: id,
          [MEMBER_ENV.socket]: `\${${MEMBER_ENV.socket}}`,
          ...(lead ? { [MEMBER_ENV.lead]: "1" } : {}),
        },
      },
    },
  };
  return {
    env: { [MEMBER_ENV.secret]: secret, [MEMBER_ENV.socket]: socketPath(stateDir), ...(lead ? { [MEMBER_ENV.lead]: "1" } : {}) },
    member: {
      configPath,
      serverName: MEMBER_SERVER_NAME,
      files: [
        { path: configPath, text: JSON.stringify(config, null, 2) + "\n" },
        { path: join(dir, MEMBER_HASH), text: hashOf(secret) + "\n" },
      ],
    },
  };
}

/**
 * A server started inside a team session (by its Bash tool, or as an MCP server of it) inherits that session's member
 * variables: removed from its environment at start, so none of its own sessions gets them (a team session of this
 * server gets its own through its launch). Returns the names removed.
 */
export function forgetMemberEnv(env: NodeJS.ProcessEnv): string[] {
  const names = [MEMBER_ENV.secret, MEMBER_ENV.socket, MEMBER_ENV.lead].filter((n) => env[n] !== undefined);
  for (const n of names) delete env[n];
  return names;
}

/** Whether `secret` is the one of session `id`'s current process (compared in constant time). */
export async function verifyMemberSecret(stateDir: string, id: string, secret: string): Promise<boolean> {
  const stored = (await readFile(join(stateDir, id, MEMBER_HASH), "utf8").catch(() => "")).trim();
  if (!/^[0-9a-f]{64}$/.test(stored)) return false;
  return timingSafeEqual(Buffer.from(stored, "hex"), Buffer.from(hashOf(secret), "hex"));
}
