/**
 * Admission: every check a start, a resume or a fork passes before anything is recorded or spawned, in one place
 * and in the order they run (the first that fails is the error, and nothing was changed). A start's checks are
 * admitStart's lines; a resume's and a fork's are admitResume's (the same checks, with the record's values where the
 * call gives none). The callers then record, plan and launch (launch.ts, resume.ts); the warm pool, run_task and the
 * web and CLI paths all come through start/resume, so through here.
 */
import type { ResumeInput, StartInput } from "../../api/index.js";
import { childEnv, type ClaudeOptions, type LaunchMode } from "../../claude/launch.js";
import { hasEntry, transcriptPath } from "../../claude/transcript.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { BackendKind } from "../../core/events.js";
import type { PermissionModeName } from "../../core/modes.js";
import type { LaunchOptions } from "../../runners/runner.js";
import type { StoredOptions } from "../../store/options.js";
import type { SessionRecord } from "../../store/schema.js";
import { assertOwnedScript, createOwnedFile, isSameFile } from "../../util/fs/owned.js";
import { checkCwd, checkEnv, checkPermissionMode, checkPrompt, claudeBinary, dopplerFor, storedDoppler } from "../checks.js";
import { allRunners, runnerOf, type Deps, type Runner } from "../deps.js";
import { checkHeadlessTrust, checkMcpServers, checkWidening } from "../gates.js";
import { checkBudgetModels, checkResumeBudget } from "../spend/budget.js";
import { effectiveMode, versionOf, withMode } from "./cli-policy.js";
import { assertOutsideState } from "./confine.js";
import { checkBackendOptions, checkVersionOptions, dopplerChoice, needsVersion, newSessionId, optionsFor, pickClaudeOptions, transientOptions } from "./options.js";
import { assertInRoots } from "./roots.js";
import { checkSandboxEnv, sandboxBlocker, sandboxFor, type SandboxChoice } from "./sandbox.js";
import { planWorktree } from "./worktree.js";

/** start_session's checks, one a line, in order; the last creates the log_file (nothing can refuse the call after it). */
export async function admitStart(d: Deps, input: StartInput, ctx: CallContext) {
  const callerCwd = await checkCwd(input.cwd);
  const permissionMode = effectiveMode(d.cfg, input.permission_mode);
  checkWidening(d.cfg, input);
  const kind = input.backend ?? d.defaultKind;
  const runner = runnerOf(d, kind);
  const claude = claudeBinary(d.cfg);
  // Read beside the checks and files below (a process of its own the first time; cached after).
  const version = versionOf(claude);
  checkBackendOptions(runner, allRunners(d), input, dopplerChoice(input) !== undefined);
  checkBudgetModels(input.max_budget_usd, [input.model, input.fallback_model]);
  const doppler = dopplerFor(d.cfg, dopplerChoice(input));
  const sandbox = sandboxFor(d.cfg, input.sandbox, sandboxBlocker(runner));
  checkPermissionMode(d.cfg, permissionMode, sandbox !== undefined);
  const env = checkEnv(d.cfg, input.env);
  if (sandbox) checkSandboxEnv(env);
  const mcpServers = checkMcpServers(d.cfg, input.mcp_servers);
  if (needsVersion(runner, input)) checkVersionOptions(runner, allRunners(d), await version, input);
  const prompt = input.prompt !== undefined ? checkPrompt(d.cfg, input.prompt, "prompt", false, runner.caps) : undefined;
  const addDirs: Array<[string, string]> = [];
  for (const dir of input.add_dirs ?? []) addDirs.push([await checkCwd(dir, "add_dirs"), "add_dirs entry"]);
  await assertOutsideState(d.cfg.stateDir, [[callerCwd, "cwd"], ...addDirs]);
  await assertInRoots(d.cfg, ctx, [[callerCwd, "cwd"], ...addDirs]);
  if (input.team_lead && !input.team_name) throw new SessionError("INVALID_ARGUMENT", "team_lead needs a team_name.", { suggestion: "Pass team_name too: the lead leads that team." });
  if (!input.worktree && (input.copy_files || input.setup_command)) {
    throw new SessionError("INVALID_ARGUMENT", "copy_files and setup_command go with worktree.", { suggestion: "Pass worktree: true (or {branch, base})." });
  }
  const id = input.session_id ?? newSessionId();
  const plan = input.worktree ? await planWorktree(d.cfg, id, callerCwd, input) : undefined;
  await checkHeadlessTrust(runner.caps.trustScreen, plan ? plan.cwd : callerCwd, childEnv(process.env, env), Boolean(input.trust_workspace), plan?.top);
  await assertOwnedScript(d.scripts.hook);
  // Last of the checks: it creates the file (nothing else is left to refuse the call afterwards).
  const logFile = input.log_file !== undefined ? await createOwnedFile(input.log_file) : undefined;
  return { callerCwd, permissionMode, kind, runner, claude, version, doppler, sandbox, env, mcpServers, prompt, id, plan, logFile };
}

/** What a resume or fork checked and chose; the runner makes its launch plan of it once the record is final. */
export interface ResumePlan {
  cwd: string;
  kind: BackendKind;
  runner: Runner;
  options: StoredOptions & { permission_mode: PermissionModeName };
  claude: string;
  opts: ClaudeOptions;
  mode: LaunchMode;
  trust: boolean;
  doppler: ReturnType<typeof dopplerFor>;
  version: string | undefined;
  transient: Pick<LaunchOptions, "mcp_servers">;
  sandbox: SandboxChoice | undefined;
}

/** Claude's options a resume may change: given ones replace the stored ones (an empty list or text clears it). */
const CHANGEABLE = ["model", "permission_mode", "allowed_tools", "disallowed_tools", "add_dirs", "append_system_prompt"] as const;

/** Every check of a resume or fork, in order (start_session's, with the record's values where the call gives none), and what it chose. */
export async function admitResume(d: Deps, rec: SessionRecord, input: ResumeInput, env: Record<string, string>, mode: LaunchMode, ctx: CallContext, forId = rec.session_id): Promise<ResumePlan> {
  const cwd = input.cwd ? await checkCwd(input.cwd) : rec.cwd;
  const kind = input.backend ?? rec.backend;
  const runner = runnerOf(d, kind);
  const claude = claudeBinary(d.cfg);
  const dopplerWanted = dopplerChoice(input) ?? storedDoppler(rec);
  checkBackendOptions(runner, allRunners(d), input, dopplerWanted !== undefined);
  if (mode.kind === "resume" && mode.at) await checkResumeAt(d, rec, mode.resumeId, mode.at);
  // A budget must be enforceable: a fork's totals start at zero, so only its models need prices.
  if (forId === rec.session_id) checkResumeBudget(rec, input);
  else checkBudgetModels(input.max_budget_usd ?? rec.max_budget_usd, [input.model ?? rec.model, input.fallback_model ?? rec.options.fallback_model]);
  const doppler = dopplerFor(d.cfg, dopplerWanted);
  const stored = optionsFor(runner, rec.options, input);
  for (const k of CHANGEABLE) {
    if (input[k] === undefined) continue;
    if (k === "add_dirs") stored.add_dirs = await Promise.all((input.add_dirs ?? []).map((a) => checkCwd(a, "add_dirs")));
    else if (k === "allowed_tools" || k === "disallowed_tools") stored[k] = input[k];
    else if (k === "permission_mode") stored.permission_mode = input.permission_mode;
    else stored[k] = input[k];
  }
  // A resumed session keeps its recorded mode (one started by an older server without one gets the default).
  const options = withMode(d.cfg, stored);
  const opts = pickClaudeOptions(options);
  await assertOutsideState(d.cfg.stateDir, [[cwd, "cwd"], ...(opts.add_dirs ?? []).map((a) => [a, "add_dirs entry"] as const)]);
  await assertInRoots(d.cfg, ctx, [[cwd, "cwd"], ...(opts.add_dirs ?? []).map((a) => [a, "add_dirs entry"] as const)]);
  checkWidening(d.cfg, { ...opts, agents: options.agents });
  const mcpServers = checkMcpServers(d.cfg, input.mcp_servers);
  // A trust_workspace stored before the operator turned it off is not acted on.
  const trust = Boolean(input.trust_workspace ?? (d.cfg.allowTrustWorkspace && rec.options.trust_workspace));
  await checkHeadlessTrust(runner.caps.trustScreen, cwd, childEnv(process.env, env), trust);
  if (rec.log_file && rec.log_file_id && forId === rec.session_id && !(await isSameFile(rec.log_file, rec.log_file_id))) {
    throw new SessionError("INVALID_ARGUMENT", `the session's log_file ${JSON.stringify(rec.log_file)} is no longer the file this server created for it; nothing was started.`, {
      suggestion: "Restore the file, or start a new session with a new log_file.",
    });
  }
  await assertOwnedScript(d.scripts.hook);
  const version = await versionOf(claude);
  checkVersionOptions(runner, allRunners(d), version, input);
  // The record's sandbox, checked again (the operator's hosts and this machine may have changed); under
  // CLAUDE_SESSIONS_SANDBOX=required one started without comes back sandboxed.
  const sandbox = sandboxFor(d.cfg, rec.sandbox ?? d.cfg.sandbox === "required", sandboxBlocker(runner));
  checkPermissionMode(d.cfg, opts.permission_mode, sandbox !== undefined);
  if (sandbox) checkSandboxEnv(env);
  return { cwd, kind, runner, options, claude, opts, mode, trust, doppler, version, sandbox, transient: transientOptions({ ...input, mcp_servers: mcpServers }) };
}

/** resume_at names a message of the conversation being resumed (get_conversation lists their uuids). */
async function checkResumeAt(d: Deps, rec: SessionRecord, claudeId: string, at: string): Promise<void> {
  const path = d.registry.followed(rec.session_id)?.fold.transcript_path ?? transcriptPath(d.cfg.claudeConfigDir, rec.cwd, claudeId);
  if (await hasEntry(path, at)) return;
  throw new SessionError("INVALID_ARGUMENT", `resume_at ${at} is not a message of conversation ${claudeId}; nothing was started.`, {
    suggestion: `get_conversation {claude_session_id: "${claudeId}"} lists each message's uuid.`,
  });
}
