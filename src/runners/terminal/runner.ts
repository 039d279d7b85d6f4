/**
 * A terminal runner (tmux, pty): Claude Code's interactive screen in a terminal host, held by the terminal driver.
 * Its plan is the Claude argv (wrapped in `doppler run` when asked) and the child's environment.
 */
import { join } from "node:path";
import { DECISIONS_DIR, hooksSettings } from "../../claude/hooks.js";
import { buildClaudeArgs, childEnv, usesDoppler, wrapWithDoppler } from "../../claude/launch.js";
import { encodeSpec } from "../../sandbox/spec.js";
import type { Driver } from "../driver.js";
import type { TerminalHost } from "../host.js";
import {
  claudeIdOf,
  withMemberTools,
  withStatusLine,
  type Capabilities,
  type KeepableOption,
  type LaunchPlan,
  type LaunchRequest,
  type Runner,
  type RunnerOption,
} from "../runner.js";
import { terminalOptionArgs } from "./option-args.js";
import { typeInto } from "./type-into.js";

const TERMINAL_HONOURS = [
  "doppler",
  "system_prompt",
  "fallback_model",
  "mcp_servers",
  "strict_mcp_config",
  "setting_sources",
  "effort",
  "agents",
  "agent",
  "tools",
  "debug",
] as const satisfies readonly RunnerOption[];

/** What its records keep for resume_session and wake: the options above but doppler (kept apart) and mcp_servers (may hold secrets). */
const TERMINAL_KEEPS = [
  "system_prompt",
  "fallback_model",
  "strict_mcp_config",
  "setting_sources",
  "effort",
  "agents",
  "agent",
  "tools",
  "debug",
] as const satisfies readonly KeepableOption[];

export function terminalCaps(host: TerminalHost): Capabilities {
  return {
    screen: true,
    survivesRestart: host.survivesRestart,
    taskDefault: false,
    warmPool: true,
    trustScreen: true,
    ownTurnLimit: false,
    ownBudget: false,
    sandbox: true,
    prompts: "input-box",
    // Measured on 2.1.197, 2.1.330 and 2.1.332 (docs/configuration.md): the interactive CLI ignores --json-schema
    // and --betas (both print mode only), so output_schema and betas are refused here.
    honours: TERMINAL_HONOURS,
    keeps: TERMINAL_KEEPS,
  };
}

/** The longest first prompt (UTF-8 bytes) sent as the CLI's argument: Linux takes 128 KiB per argument. */
export const ARGV_PROMPT_MAX_BYTES = 100_000;

export function terminalPlan(host: TerminalHost, req: LaunchRequest): LaunchPlan {
  // A team session's member server: a file the server wrote (its secret is a variable of the environment, never argv).
  const extra = terminalOptionArgs(req.dir, req.options);
  const claudeArgv = [
    req.claude,
    ...buildClaudeArgs(req.mode, req.settingsPath, req.claudeOptions),
    ...extra.args,
    ...(req.member ? [`--mcp-config=${req.member.configPath}`] : []),
  ];
  // The first prompt as the CLI's positional argument, after `--` (2.1.330 submits it once it is up, byte-exact, with
  // SessionStart first): nothing is typed, so there is no wait for the input box and no paste. It travels in the
  // hand-off file (tmux) or node-pty's argv, never through a shell or tmux's parser; the record's command leaves it out.
  const carried = req.prompt !== undefined && Buffer.byteLength(req.prompt) <= ARGV_PROMPT_MAX_BYTES ? req.prompt : undefined;
  const wrap = (a: string[]) => (req.doppler ? wrapWithDoppler(a, req.doppler) : a);
  const shown = wrap(claudeArgv);
  const inner = carried === undefined ? claudeArgv : [...claudeArgv, "--", carried];
  // Sandboxed: the launcher runs in Claude's place (under doppler, so it holds the real values); Claude's argv,
  // the carried prompt included, travels in its spec file (0600, the session's own folder), never on a command line.
  const sb = req.sandbox;
  const argv = sb ? wrap([sb.node, sb.launcher, sb.specPath]) : wrap(inner);
  const env = childEnv(
    process.env,
    { ...req.env, ...extra.env, CLAUDE_SESSION_ID: claudeIdOf(req.mode) },
    { doppler: usesDoppler(argv) },
  );
  // Under doppler the launcher masks every variable Doppler adds: those it holds that the server did not pass.
  const secrets = sb?.spec.secrets && req.doppler ? { ...sb.spec.secrets, dopplerBase: Object.keys(env) } : sb?.spec.secrets;
  const specFiles = sb
    ? [
        {
          path: sb.specPath,
          text: encodeSpec({
            ...sb.spec,
            ...(secrets ? { secrets } : {}),
            argv: inner,
            allowRead: [
              ...sb.spec.allowRead,
              req.settingsPath,
              ...extra.files.map((f) => f.path),
              ...(req.member ? [req.member.configPath] : []),
            ],
          }),
        },
      ]
    : [];
  // Permission requests wait in the blocking hook for the server's answer (a file in the session's decisions folder).
  const perm = req.permission
    ? { script: req.permission.script, decisionsDir: join(req.dir, DECISIONS_DIR), timeoutMs: req.permission.timeoutMs }
    : undefined;
  return {
    command: shown,
    carriesPrompt: carried !== undefined,
    settings: withStatusLine(
      withMemberTools(hooksSettings(req.eventsPath, perm, { backgroundStart: true, backgroundPrompt: true }), req.member),
      req.windowsFile,
    ),
    hookScripts: perm ? [perm.script] : [],
    files: [...extra.files, ...specFiles],
    underDoppler: argv[1] === "run" && /doppler/i.test(argv[0] ?? ""),
    spawn: ({ generation }) =>
      host.spawn({
        id: req.id,
        dir: req.dir,
        argv,
        cwd: req.cwd,
        env,
        cols: req.cols,
        rows: req.rows,
        rawLogPath: req.rawLogPath,
        eventsPath: req.eventsPath,
        ...(generation ? { generation } : {}),
      }),
  };
}

/** What a terminal kind knows of its machine (tmux: its program; pty: node-pty); without it, the host is taken as it is. */
export type TerminalProbe = Pick<Runner, "available" | "health">;

export function terminalRunner(host: TerminalHost, driver: Driver, probe?: TerminalProbe): Runner {
  return {
    kind: host.kind,
    caps: terminalCaps(host),
    host,
    terminal: host,
    driver,
    plan: (req) => terminalPlan(host, req),
    available: probe?.available ?? (async () => undefined),
    health: probe?.health ?? (async () => ({ check: host.kind, ok: true, detail: `${host.kind} host` })),
    close: async () => host.close?.(),
    typeInto: (spec, text, ctx) => typeInto(host, spec, text, ctx),
  };
}
