/**
 * The operator's gates on arguments that start a program or widen what a session may do. Each refusal is
 * PERMISSION_DENIED naming the server variable that would allow it; nothing is made or run before them.
 *   - setup_command: its program must be in CLAUDE_SESSIONS_SETUP_COMMANDS (matched on the resolved path); the
 *     string form also needs CLAUDE_SESSIONS_ALLOW_SETUP_SHELL=1 (and /bin/sh in the list).
 *   - mcp_servers (every backend) with a command: CLAUDE_SESSIONS_ALLOW_MCP_SERVERS=1, or the command in
 *     CLAUDE_SESSIONS_MCP_COMMANDS; http/sse servers start nothing here.
 *   - env: variables that choose what runs (REFUSED_ENV) only when CLAUDE_SESSIONS_ALLOW_ENV names them.
 *   - trust_workspace: refused when CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE=0; a headless start in a folder Claude
 *     Code does not trust is STARTUP_BLOCKED, as the terminal's trust screen is.
 */
import type { Config } from "../config.js";
import { isFolderTrusted } from "../claude/trust.js";
import { SessionError } from "../core/errors.js";
import { isAllowedProgram, resolveProgram } from "../util/proc/programs.js";

/**
 * Variables a caller's `env` may not set unless the operator allows them by name: they choose which programs run
 * (hooks, the launcher, setup_command, MCP servers, git, editors) or what they load, which Claude configuration
 * (and so which hooks and trust record) applies, or where the CLI sends the server user's credentials.
 */
export const REFUSED_ENV: readonly string[] = [
  "PATH",
  "HOME",
  "SHELL",
  "ENV",
  "BASH_ENV",
  "IFS",
  "CDPATH",
  "PS4",
  "SHELLOPTS",
  "BASHOPTS",
  "PROMPT_COMMAND",
  "ZDOTDIR",
  "GLOBIGNORE",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PERL5OPT",
  "PERL5LIB",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "GCONV_PATH",
  "XDG_CONFIG_HOME",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "MANPAGER",
  "LESSOPEN",
  "LESSCLOSE",
  "BROWSER",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "CLAUDE_CONFIG_DIR",
  "CLAUDE_CODE_SHELL",
  "CLAUDE_CODE_SHELL_PREFIX",
  "CLAUDE_CODE_GIT_BASH_PATH",
  "CLAUDE_CODE_SANDBOXED",
  "LD_*",
  "DYLD_*",
  "PYTHON*",
  "GIT_*",
  "npm_config_*",
  // Where the CLI sends its requests, with the server user's API key or login: a caller's endpoint or proxy
  // would receive them (and a CA file of its own would let it read them).
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_BEDROCK_BASE_URL",
  "ANTHROPIC_VERTEX_BASE_URL",
  "ANTHROPIC_FOUNDRY_BASE_URL",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_TLS_REJECT_UNAUTHORIZED",
];

/** GIT_* variables that only name the author of a commit. */
const GIT_IDENTITY = new Set([
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_COMMITTER_DATE",
]);

function matches(pattern: string, name: string): boolean {
  if (pattern.endsWith("*")) {
    const head = pattern.slice(0, -1);
    // npm reads its variables in any case.
    return head === "npm_config_" ? name.toLowerCase().startsWith(head) : name.startsWith(head);
  }
  return pattern === name;
}

/** The REFUSED_ENV entry `name` falls under, or undefined when a caller may set it. */
export function refusedEnvEntry(name: string): string | undefined {
  if (GIT_IDENTITY.has(name)) return undefined;
  return REFUSED_ENV.find((p) => matches(p, name));
}

/** PERMISSION_DENIED for the first variable of `env` that chooses what runs and the operator did not allow. */
export function checkEnvNames(cfg: Config, env: Record<string, string>, what = "env"): void {
  for (const k of Object.keys(env)) {
    if (!refusedEnvEntry(k) || cfg.allowEnv.some((p) => matches(p, k))) continue;
    throw new SessionError(
      "PERMISSION_DENIED",
      `${what} ${k} chooses which programs run or what they load; this server does not let callers set it.`,
      {
        suggestion: `Leave it out, or start the server with CLAUDE_SESSIONS_ALLOW_ENV=${k} (a comma-separated list of names; NAME_* for a prefix).`,
        details: { variable: k },
      },
    );
  }
}

export interface SetupProgram {
  file: string;
  args: string[];
  shown: string;
}

/** The program a setup_command runs (its resolved absolute path), or PERMISSION_DENIED / INVALID_ARGUMENT. */
export function checkSetupCommand(cfg: Config, sc: string | string[]): SetupProgram {
  const shell = typeof sc === "string";
  if (shell && !cfg.allowSetupShell) {
    throw new SessionError(
      "PERMISSION_DENIED",
      "setup_command as a string is a shell command line, which this server does not run.",
      {
        suggestion:
          'Pass it as an argv array (e.g. ["npm", "ci"]) of a program in CLAUDE_SESSIONS_SETUP_COMMANDS, or start the server ' +
          "with CLAUDE_SESSIONS_ALLOW_SETUP_SHELL=1 (and /bin/sh in CLAUDE_SESSIONS_SETUP_COMMANDS).",
      },
    );
  }
  const argv = shell ? ["/bin/sh", "-c", sc] : sc;
  if (!argv[0] || argv.some((a) => a.includes("\0")))
    throw new SessionError(
      "INVALID_ARGUMENT",
      "setup_command: the program (its first element) must be given, and no element may contain NUL.",
    );
  const pathVar = process.env.PATH;
  const file = resolveProgram(argv[0], pathVar);
  if (!file || !isAllowedProgram(file, cfg.setupCommands, pathVar)) {
    const why = file
      ? `${JSON.stringify(argv[0])} (${file})`
      : `${JSON.stringify(argv[0])} (not a program on the server's PATH, or a relative path)`;
    throw new SessionError("PERMISSION_DENIED", `setup_command: ${why} is not a program this server lets setup commands run.`, {
      suggestion:
        `Ask the operator to list it in CLAUDE_SESSIONS_SETUP_COMMANDS (now: ${cfg.setupCommands.join(",") || "empty"}); ` +
        `names are matched on the resolved path.`,
      details: { variable: "CLAUDE_SESSIONS_SETUP_COMMANDS" },
    });
  }
  return { file, args: argv.slice(1), shown: shell ? sc : JSON.stringify(sc) };
}

type McpServer = {
  type?: "stdio" | "sse" | "http";
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
};

/**
 * Headless mcp_servers: http/sse servers go as they are; a stdio server (a program) only with the operator's
 * switch, or when its command is in CLAUDE_SESSIONS_MCP_COMMANDS (then it runs by that resolved path, and its env
 * passes the same check as the session's).
 */
export function checkMcpServers<T extends Record<string, McpServer>>(cfg: Config, servers: T | undefined): T | undefined {
  if (!servers) return servers;
  const out: Record<string, McpServer> = {};
  for (const [name, s] of Object.entries(servers)) {
    if (s.type === "http" || s.type === "sse" || s.command === undefined || cfg.allowMcpServers) {
      out[name] = s;
      continue;
    }
    const pathVar = process.env.PATH;
    const file = resolveProgram(s.command, pathVar);
    if (!file || !isAllowedProgram(file, cfg.mcpCommands, pathVar)) {
      throw new SessionError(
        "PERMISSION_DENIED",
        `mcp_servers.${name}: a stdio MCP server is a program (${JSON.stringify(s.command)}), and this server does not let callers start it.`,
        {
          suggestion:
            "Use an http or sse server, or ask the operator for CLAUDE_SESSIONS_ALLOW_MCP_SERVERS=1 or to list the command " +
            "in CLAUDE_SESSIONS_MCP_COMMANDS (matched on the resolved path).",
          details: { variable: "CLAUDE_SESSIONS_ALLOW_MCP_SERVERS" },
        },
      );
    }
    if (s.env) checkEnvNames(cfg, s.env, `mcp_servers.${name}.env`);
    out[name] = { ...s, command: file };
  }
  return out as T;
}

/**
 * Options that widen what Claude may do without asking: a permission mode the operator did not list
 * (CLAUDE_SESSIONS_PERMISSION_MODES), allowed_tools and agents with their own tools (CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0
 * refuses both) and add_dirs (CLAUDE_SESSIONS_ALLOW_ADD_DIRS=0). bypassPermissions also needs CLAUDE_SESSIONS_ALLOW_BYPASS (checks.ts).
 */
export function checkWidening(
  cfg: Config,
  o: {
    permission_mode?: string | undefined;
    allowed_tools?: string[] | undefined;
    add_dirs?: string[] | undefined;
    trust_workspace?: boolean | undefined;
    agents?: Record<string, { tools?: string[] | undefined }> | undefined;
  },
): void {
  checkTrustWorkspace(cfg, o.trust_workspace);
  const deny = (what: string, variable: string, suggestion: string) => {
    throw new SessionError("PERMISSION_DENIED", `${what} is turned off for callers on this server.`, {
      suggestion,
      details: { variable },
    });
  };
  if (o.permission_mode !== undefined && cfg.permissionModes && !cfg.permissionModes.includes(o.permission_mode)) {
    deny(
      `permission_mode ${o.permission_mode}`,
      "CLAUDE_SESSIONS_PERMISSION_MODES",
      `Use one of ${cfg.permissionModes.join(", ") || "(none)"}, or ask the operator to add it to CLAUDE_SESSIONS_PERMISSION_MODES.`,
    );
  }
  if (o.allowed_tools?.length && !cfg.allowToolRules)
    deny(
      "allowed_tools (tools Claude may use without asking)",
      "CLAUDE_SESSIONS_ALLOW_TOOL_RULES",
      "Leave allowed_tools out (answer permission requests with respond_permission), or ask the operator to unset CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0.",
    );
  // A sub-agent's own tool list is a tool grant like allowed_tools: the same switch turns both off.
  const tooled = Object.entries(o.agents ?? {}).find(([, a]) => a.tools?.length);
  if (tooled && !cfg.allowToolRules)
    deny(
      `agents.${tooled[0]}.tools (a sub-agent's own tool set)`,
      "CLAUDE_SESSIONS_ALLOW_TOOL_RULES",
      "Leave the agents' tools out (they then have the session's), or ask the operator to unset CLAUDE_SESSIONS_ALLOW_TOOL_RULES=0.",
    );
  if (o.add_dirs?.length && !cfg.allowAddDirs)
    deny(
      "add_dirs (more folders Claude may read and edit)",
      "CLAUDE_SESSIONS_ALLOW_ADD_DIRS",
      "Leave add_dirs out, or ask the operator to unset CLAUDE_SESSIONS_ALLOW_ADD_DIRS=0.",
    );
}

/**
 * A session this server did not start (Claude Code's own background sessions) already runs in `mode`: a caller's
 * prompt goes there only when this server would start a session in that mode — bypassPermissions needs
 * CLAUDE_SESSIONS_ALLOW_BYPASS, and with CLAUDE_SESSIONS_PERMISSION_MODES the mode must be listed (or be the
 * server's default).
 */
export function checkRunningMode(cfg: Config, mode: string, what: string): void {
  const deny = (why: string, variable: string) => {
    throw new SessionError("PERMISSION_DENIED", `${what} runs in permission mode ${mode}, ${why}; nothing was typed.`, {
      suggestion: `Switch its mode yourself (claude attach, then shift+tab), or ask the operator for ${variable}.`,
      details: { permission_mode: mode, variable },
    });
  };
  if (mode === "bypassPermissions" && !cfg.allowBypassPermissions)
    deny("which this server refuses", "CLAUDE_SESSIONS_ALLOW_BYPASS=1");
  if (cfg.permissionModes && mode !== cfg.defaultPermissionMode && !cfg.permissionModes.includes(mode))
    deny("which this server does not offer callers", `${mode} in CLAUDE_SESSIONS_PERMISSION_MODES`);
}

/** trust_workspace: true, unless the operator turned it off for callers. */
export function checkTrustWorkspace(cfg: Config, given: boolean | undefined): void {
  if (given && !cfg.allowTrustWorkspace) {
    throw new SessionError(
      "PERMISSION_DENIED",
      "trust_workspace is turned off on this server: a session cannot accept Claude Code's folder trust for you.",
      {
        suggestion:
          "Trust the folder yourself (run `claude` there once and accept), or ask the operator to unset CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE=0.",
        details: { variable: "CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE" },
      },
    );
  }
}

/**
 * A runner with no trust screen (headless: the CLI runs the folder's settings, hooks too, as a trusted one): a start
 * there in a folder Claude Code does not trust stops here, with the terminal's error and way out.
 */
export async function checkHeadlessTrust(
  showsTrustScreen: boolean,
  cwd: string,
  env: Record<string, string | undefined>,
  trust: boolean,
  repo?: string,
): Promise<void> {
  if (showsTrustScreen || trust) return;
  if (await isFolderTrusted(cwd, env, repo)) return;
  throw new SessionError(
    "STARTUP_BLOCKED",
    `Claude Code does not trust the folder ${cwd} (no accepted trust record for it or a folder above it), and a headless ` +
      `session would run its settings unasked.`,
    {
      suggestion: "Pass trust_workspace: true to accept it, or run `claude` once in that folder yourself.",
      details: { screen: "trust" },
    },
  );
}
