/**
 * A terminal runner (tmux, pty): Claude Code's interactive screen in a terminal host, held by the terminal driver.
 * Its plan is the Claude argv (wrapped in `doppler run` when asked) and the child's environment.
 */
import { join } from "node:path";
import { DECISIONS_DIR, hooksSettings } from "../../claude/hooks.js";
import { buildClaudeArgs, childEnv, usesDoppler, wrapWithDoppler } from "../../claude/launch.js";
import type { Driver } from "../driver.js";
import type { TerminalHost } from "../host.js";
import { claudeIdOf, withMemberTools, type Capabilities, type LaunchPlan, type LaunchRequest, type Runner } from "../runner.js";

export function terminalCaps(host: TerminalHost): Capabilities {
  return {
    screen: true,
    survivesRestart: host.survivesRestart,
    taskDefault: false,
    warmPool: true,
    trustScreen: true,
    ownTurnLimit: false,
    prompts: "input-box",
    honours: ["doppler"],
    keeps: [],
  };
}

export function terminalPlan(host: TerminalHost, req: LaunchRequest): LaunchPlan {
  // A team session's member server: a file the server wrote (its secret is a variable of the environment, never argv).
  const claudeArgv = [req.claude, ...buildClaudeArgs(req.mode, req.settingsPath, req.claudeOptions), ...(req.member ? [`--mcp-config=${req.member.configPath}`] : [])];
  const argv = req.doppler ? wrapWithDoppler(claudeArgv, req.doppler) : claudeArgv;
  const env = childEnv(process.env, { ...req.env, CLAUDE_SESSION_ID: claudeIdOf(req.mode) }, { doppler: usesDoppler(argv) });
  // Permission requests wait in the blocking hook for the server's answer (a file in the session's decisions folder).
  const perm = req.permission ? { script: req.permission.script, decisionsDir: join(req.dir, DECISIONS_DIR), timeoutMs: req.permission.timeoutMs } : undefined;
  return {
    command: argv,
    settings: withMemberTools(hooksSettings(req.eventsPath, perm), req.member),
    hookScripts: perm ? [perm.script] : [],
    underDoppler: argv[1] === "run" && /doppler/i.test(argv[0] ?? ""),
    spawn: ({ generation }) =>
      host.spawn({ id: req.id, dir: req.dir, argv, cwd: req.cwd, env, cols: req.cols, rows: req.rows, rawLogPath: req.rawLogPath, eventsPath: req.eventsPath, ...(generation ? { generation } : {}) }),
  };
}

export function terminalRunner(host: TerminalHost, driver: Driver): Runner {
  return { kind: host.kind, caps: terminalCaps(host), backend: host, terminal: host, driver, plan: (req) => terminalPlan(host, req) };
}
