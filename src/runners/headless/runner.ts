/**
 * The headless runner: the CLI through the Agent SDK, no terminal; it lives as long as this server. Its plan is a
 * conversation (no argv: the SDK builds the CLI's), run by HeadlessHost on the session layer's fold.
 */
import { CLAUDE_OPTIONS } from "../../api/index.js";
import { HEADLESS_HOOKS, hooksSettings } from "../../claude/hooks.js";
import { childEnv } from "../../claude/launch.js";
import { encodeSpec } from "../../sandbox/spec.js";
import type { Driver } from "../driver.js";
import { claudeIdOf, withMemberTools, type Capabilities, type LaunchPlan, type LaunchRequest, type Runner } from "../runner.js";
import { DEFAULT_PERMISSION_TIMEOUT_MS } from "../../core/modes.js";
import type { RunnerHealth, RunnerSetup } from "../runner.js";
import { HeadlessDriver } from "./driver.js";
import { HeadlessHost } from "./host.js";
import { loadSdk } from "./sdk.js";

export const HEADLESS_CAPS: Capabilities = {
  screen: false,
  survivesRestart: false,
  taskDefault: true,
  warmPool: true,
  trustScreen: false,
  ownTurnLimit: true,
  ownBudget: true,
  sandbox: true,
  prompts: "message",
  // resume_at: the CLI honours --resume-session-at in print mode only (measured: docs/configuration.md).
  honours: [...CLAUDE_OPTIONS, "resume_at"],
  // 2.1.197 has no `--await-initialize` (the SDK's delivery of mcp_servers over stdin); 2.1.330 has.
  since: { mcp_servers: "2.1.330" },
  // mcp_servers never: their env and headers may hold secrets.
  keeps: [
    "max_turns",
    "max_budget_usd",
    "system_prompt",
    "fallback_model",
    "strict_mcp_config",
    "setting_sources",
    "output_schema",
    "effort",
    "agents",
    "agent",
    "tools",
    "betas",
    "debug",
  ],
};

export function headlessPlan(host: HeadlessHost, req: LaunchRequest): LaunchPlan {
  // The SDK's import (the first time: ~70 ms of CPU) runs while the session layer writes the record and the files.
  loadSdk().catch(() => {});
  const claudeId = claudeIdOf(req.mode);
  const env = childEnv(process.env, { ...req.env, CLAUDE_SESSION_ID: claudeId });
  const conversation =
    req.mode.kind === "new"
      ? { claude_session_id: claudeId }
      : {
          claude_session_id: claudeId,
          resume_id: req.mode.resumeId,
          fork: Boolean(req.mode.fork),
          ...(req.mode.at ? { resume_at: req.mode.at } : {}),
        };
  // Sandboxed: the spec (no argv: the SDK's command follows `--` on the launcher's command line) is written before the
  // spawn; the CLI reads its settings and a team session's member configuration from the session's (denied) folder.
  const sb = req.sandbox;
  const files = sb
    ? [
        {
          path: sb.specPath,
          text: encodeSpec({
            ...sb.spec,
            argv: [],
            allowRead: [...sb.spec.allowRead, req.settingsPath, ...(req.member ? [req.member.configPath] : [])],
          }),
        },
      ]
    : undefined;
  return {
    command: [req.claude],
    underDoppler: false,
    ...(files ? { files } : {}),
    // Permissions are answered through canUseTool: no blocking hook. The turn's events come to HeadlessSession's
    // in-process callbacks; SessionEnd and the SessionStart of /clear and /compact are commands (HEADLESS_HOOKS).
    settings: withMemberTools(hooksSettings(req.eventsPath, undefined, HEADLESS_HOOKS), req.member),
    hookScripts: [],
    // The SDK's input takes a prompt while the CLI starts (the driver's `carried`): it runs as soon as the CLI is up.
    carriesPrompt: req.prompt !== undefined,
    spawn: ({ live, generation }) =>
      host.spawn({
        id: req.id,
        dir: req.dir,
        cwd: req.cwd,
        env,
        rawLogPath: req.rawLogPath,
        eventsPath: req.eventsPath,
        ...(generation ? { generation } : {}),
        claude: req.claude,
        ...conversation,
        options: req.options,
        live,
        ...(req.member ? { member_mcp_config: req.member.configPath } : {}),
        ...(sb ? { launcher: { node: sb.node, launcher: sb.launcher, spec_path: sb.specPath } } : {}),
        ...(req.windowsFile ? { windows_file: req.windowsFile } : {}),
      }),
  };
}

/** The Agent SDK (headless sessions) resolves and exports query(). */
async function agentSdk(): Promise<RunnerHealth> {
  try {
    const m = (await import("@anthropic-ai/claude-agent-sdk")) as { query?: unknown };
    if (typeof m.query !== "function")
      return {
        check: "agent_sdk",
        ok: false,
        detail: "@anthropic-ai/claude-agent-sdk loads but has no query(): headless sessions are unavailable",
      };
    return { check: "agent_sdk", ok: true, detail: "@anthropic-ai/claude-agent-sdk loads (headless sessions)" };
  } catch (e) {
    return {
      check: "agent_sdk",
      ok: false,
      detail: `@anthropic-ai/claude-agent-sdk does not load: ${String(e).slice(0, 200)} (headless sessions are unavailable)`,
    };
  }
}

export function headlessRunner(host: HeadlessHost, driver: Driver): Runner {
  return {
    kind: host.kind,
    caps: HEADLESS_CAPS,
    host,
    driver,
    plan: (req) => headlessPlan(host, req),
    // The SDK is imported on the first session (its error says why).
    available: async () => undefined,
    health: agentSdk,
    close: () => host.close(),
  };
}

/** The headless runner kind: the CLI through the Agent SDK, no terminal; its sessions live as long as this server. */
export function makeHeadlessRunner({ cfg, log }: RunnerSetup): Runner {
  const host = new HeadlessHost({
    log,
    permissionTimeoutMs: cfg.permissionTimeoutMs || DEFAULT_PERMISSION_TIMEOUT_MS,
    startTimeoutMs: cfg.startTimeoutMs,
  });
  return headlessRunner(host, new HeadlessDriver(host));
}
