/**
 * resume_session: a new process for an ended session (the same conversation, or a fork of it), or the adoption
 * of any Claude Code conversation by its id and cwd. Checks as start_session does, then launches (launch.ts).
 */
import { randomUUID } from "node:crypto";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ResumeInput, ResumeOutput } from "../api/index.js";
import { childEnv, type ClaudeOptions, type LaunchMode } from "../claude/launch.js";
import { hasEntry, transcriptPath } from "../claude/transcript.js";
import type { PermissionModeName } from "../core/modes.js";
import type { LaunchOptions, LaunchPlan as RunnerPlan } from "../runners/runner.js";
import type { StoredOptions } from "../store/options.js";
import { claudeIdOf } from "../runners/runner.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import type { BackendKind } from "../core/events.js";
import { isLive } from "../core/status.js";
import { newRecord, type SessionRecord } from "../store/schema.js";
import { withFileLock } from "../util/flock.js";
import { endTree, sessionTag, sessionTree } from "../util/proctree.js";
import { assertOwnedScript, isSameFile } from "../util/owned.js";
import { ANY_RUNNER, assertRoom, checkCwd, checkEnv, checkPermissionMode, checkPrompt, claudeBinary, dopplerFor, storedDoppler } from "./checks.js";
import { checkBackendOptions, checkVersionOptions, optionsFor, transientOptions } from "./backend-options.js";
import { checkBudgetModels, checkResumeBudget } from "./budget.js";
import { allRunners, runnerOf, type Deps, type Runner } from "./deps.js";
import { checkSandboxEnv, sandboxBlocker, sandboxFor, type SandboxChoice } from "./sandbox.js";
import { pickClaudeOptions } from "./claude-options.js";
import { confirmCarried, deliverPrompt } from "./turns.js";
import type { Delivery } from "../runners/driver.js";
import { setVersion, versionOf, withMode } from "./cli-policy.js";
import { dopplerChoice } from "./start-options.js";
import { claimTeammate } from "./team.js";
import { assertOutsideState } from "./confine.js";
import { assertInRoots } from "./roots.js";
import { checkHeadlessTrust, checkMcpServers, checkTrustWorkspace, checkWidening } from "./gates.js";
import { carryOf, launch, launchRequest, newSessionId, planOf, result, sessionEnv, teamOf } from "./launch.js";

/**
 * Two resume_session calls of one session at once: in this process the second gets the first one's result;
 * across processes a lock file orders them and the later one finds the session running (SESSION_BUSY).
 */
export async function resume(d: Deps, input: ResumeInput, ctx: CallContext): Promise<ResumeOutput> {
  // Two forks are two new sessions: never the same call.
  if (input.fork) return resumeOnce(d, input, ctx);
  const key = input.session_id ?? input.claude_session_id ?? "";
  const running = d.resuming.get(key);
  if (running) return { ...((await running) as ResumeOutput), already_running: true };
  const p = resumeOnce(d, input, ctx);
  d.resuming.set(key, p);
  try {
    return await p;
  } finally {
    d.resuming.delete(key);
  }
}

async function resumeOnce(d: Deps, input: ResumeInput, ctx: CallContext): Promise<ResumeOutput> {
  if (input.message !== undefined) checkPrompt(d.cfg, input.message, "message", false, ANY_RUNNER);
  const env = checkEnv(d.cfg, input.env);
  checkTrustWorkspace(d.cfg, input.trust_workspace);
  let rec: SessionRecord;
  if (input.session_id) {
    const found = await d.store.get(input.session_id);
    // The design's answer for an id it does not know: a result saying so (as kill_session's not_found), not an error.
    if (!found) return { session_id: input.session_id, status: "not_found", resumed_at: new Date().toISOString(), forked: false };
    rec = found;
  } else if (input.claude_session_id) {
    if (!input.cwd) throw new SessionError("INVALID_ARGUMENT", "adopting a conversation needs its cwd as well as claude_session_id.");
    const cwd = await checkCwd(input.cwd);
    // Before anything is recorded for the adopted conversation.
    await assertInRoots(d.cfg, ctx, [[cwd, "cwd"]]);
    rec = await adoptConversation(d, input.claude_session_id, cwd, input.backend);
  } else {
    throw new SessionError("INVALID_ARGUMENT", "pass session_id (a session of this server) or claude_session_id with cwd (any Claude Code conversation).");
  }
  // The rules of the runner it will run on (a headless session's message may hold what the input box must refuse).
  const message = input.message !== undefined ? checkPrompt(d.cfg, input.message, "message", false, d.runners[input.backend ?? rec.backend]?.caps) : undefined;
  // A fork is a new session: its parent may run on (and keeps its record and generation).
  if (input.fork) return fork(d, rec, input, message, env, ctx);
  // Whichever way it was named, a running session is not started a second time.
  await assertNotRunning(d, rec);
  const seen = rec.generation ?? 0;
  await mkdir(d.registry.paths(rec.session_id).dir, { recursive: true, mode: 0o700 });
  return withFileLock(join(d.registry.paths(rec.session_id).dir, "resume.lock"), async () => {
    const now = await d.registry.record(rec.session_id);
    if ((now.generation ?? 0) !== seen) {
      throw new SessionError("SESSION_BUSY", `session ${rec.session_id} was resumed by another call a moment ago.`, { suggestion: "Use send_message to talk to it (list_sessions shows its status)." });
    }
    return relaunch(d, now, input, message, env, ctx);
  }, { timeoutMs: d.cfg.startTimeoutMs * 2, ...(ctx.signal ? { signal: ctx.signal } : {}) });
}

/**
 * `carry` (a wake's prompt): the message goes only if the launch can carry it (launch.ts); never typed here, as the
 * caller holds the session's keys. `carry.sent_at` and `carry.promptNo` say it went, once Claude accepted it.
 */
export async function relaunch(d: Deps, rec: SessionRecord, input: ResumeInput, message: string | undefined, env: Record<string, string>, ctx: CallContext, carry?: CarryOut): Promise<ResumeOutput> {
  const fresh = await neverPrompted(d, rec);
  const mode: LaunchMode = fresh ? { kind: "new", claudeSessionId: randomUUID() } : { kind: "resume", resumeId: rec.claude_session_id, ...(input.resume_at ? { at: input.resume_at } : {}) };
  const plan = await planLaunch(d, rec, input, env, mode, ctx);
  const { options, runner, kind, cwd, doppler, version } = plan;
  let launchPlan: RunnerPlan | undefined;
  const previous = { created_at: rec.created_at, ...(rec.last_active ? { last_active: rec.last_active } : {}), claude_session_id: rec.claude_session_id };

  // Clear what is left of the old terminal before reusing its name, and let the old process finish: when its
  // terminal died under it (tmux killed), Claude may still be on its way out, and its late SessionEnd would
  // otherwise land after the new cs:spawn and end the new process's fold. Found by the session's tag, never by
  // a stored pid that may have been reused.
  await d.runners[rec.backend]?.backend.remove(rec.session_id).catch(() => {});
  const lingering = sessionTree(undefined, sessionTag(rec.session_id));
  if (lingering.length) {
    d.log.info(`${rec.session_id}: ending ${lingering.length} process(es) of its previous run before resuming`);
    await endTree(lingering, undefined, 1500);
  }
  const updated = await d.store.update((s) => {
    const r = s.sessions[rec.session_id];
    if (!r) throw new SessionError("SESSION_NOT_FOUND", `session ${rec.session_id} disappeared.`);
    assertRoom(d.cfg, s.sessions, r.session_id);
    claimTeammate(s.sessions, r);
    r.status = "starting";
    if (mode.kind === "new") r.claude_session_id = mode.claudeSessionId;
    r.cwd = cwd;
    r.backend = kind;
    r.options = options;
    r.permission_mode = options.permission_mode;
    if (typeof options.model === "string" && options.model) r.model = options.model;
    else delete r.model;
    setVersion(r, version);
    if (plan.sandbox) r.sandbox = plan.sandbox;
    else delete r.sandbox;
    launchPlan = planFor(d, plan, r, env, message, s.sessions);
    [r.command, ...r.args] = launchPlan.command as [string, ...string[]];
    r.env_names = [...new Set([...r.env_names, ...Object.keys(env)])].sort();
    if (input.max_budget_usd !== undefined) r.max_budget_usd = input.max_budget_usd;
    // A new process, a new generation (under the lock: unique across servers); a late exit of the old one is ignored.
    r.generation = (r.generation ?? 0) + 1;
    if (doppler?.project) r.doppler_project = doppler.project;
    if (doppler?.config) r.doppler_config = doppler.config;
    delete r.killed_at;
    delete r.exit_code;
    delete r.pending_permission;
    return structuredClone(r);
  });
  const promptNo = (d.registry.followed(rec.session_id)?.fold.prompts_submitted ?? 0) + 1;
  const { carried } = await launch(d, updated, runner, launchPlan!, claudeIdOf(mode), plan.trust, ctx, launchPlan!.carriesPrompt ? message : undefined);
  if (carry) {
    if (carried) Object.assign(carry, { sent_at: await confirmCarried(d, rec.session_id, message!, carried), promptNo });
  } else await firstMessage(d, rec.session_id, message, carried, ctx);
  return { ...(await result(d, rec.session_id)), resumed_at: new Date().toISOString(), forked: false, previous_state: previous };
}

/**
 * A fork: a new session (its own id, record, events and totals) from the conversation so far, with the parent's
 * cwd, options and team unless given; the parent is not touched (it may be running). Claude copies the history into
 * the fork's transcript; those lines are the parent's usage, not the fork's (cost.ts skips them by `forked_from.at`).
 */
async function fork(d: Deps, parent: SessionRecord, input: ResumeInput, message: string | undefined, env: Record<string, string>, ctx: CallContext): Promise<ResumeOutput> {
  const fold = d.registry.followed(parent.session_id)?.fold;
  const parentClaudeId = fold?.claude_session_id ?? parent.claude_session_id;
  const newClaudeId = randomUUID();
  const id = newSessionId();
  const plan = await planLaunch(d, parent, input, env, { kind: "resume", resumeId: parentClaudeId, fork: { newId: newClaudeId }, ...(input.resume_at ? { at: input.resume_at } : {}) }, ctx, id);
  const { options, mode, runner, kind, cwd, doppler, version } = plan;
  let launchPlan: RunnerPlan | undefined;
  const at = new Date().toISOString();
  const rec = newRecord({
    session_id: id,
    claude_session_id: newClaudeId,
    backend: kind,
    status: "starting",
    created_at: at,
    cwd,
    command: "",
    args: [],
    env_names: Object.keys(env).sort(),
    options,
    generation: 1,
    forked_from: { session_id: parent.session_id, claude_session_id: parentClaudeId, at },
  });
  rec.permission_mode = options.permission_mode;
  if (typeof options.model === "string" && options.model) rec.model = options.model;
  setVersion(rec, version);
  if (parent.team_name) rec.team_name = parent.team_name;
  if (plan.sandbox) rec.sandbox = plan.sandbox;
  if (parent.max_turns !== undefined) rec.max_turns = parent.max_turns;
  const budget = input.max_budget_usd ?? parent.max_budget_usd;
  if (budget !== undefined) rec.max_budget_usd = budget;
  // A fork of a pooled teammate spends from the same team budget (pool.ts).
  if (parent.budget_pool !== undefined) rec.budget_pool = parent.budget_pool;
  if (doppler?.project) rec.doppler_project = doppler.project;
  if (doppler?.config) rec.doppler_config = doppler.config;
  await d.store.update((s) => {
    assertRoom(d.cfg, s.sessions);
    // A teammate name means one conversation: the fork gets a new one in the parent's team.
    claimTeammate(s.sessions, rec);
    launchPlan = planFor(d, plan, rec, env, message, s.sessions);
    [rec.command, ...rec.args] = launchPlan.command as [string, ...string[]];
    s.sessions[id] = rec;
  });
  const { carried } = await launch(d, rec, runner, launchPlan!, claudeIdOf(mode), plan.trust, ctx, launchPlan!.carriesPrompt ? message : undefined);
  await firstMessage(d, id, message, carried, ctx);
  const previous = { created_at: parent.created_at, ...(parent.last_active ? { last_active: parent.last_active } : {}), claude_session_id: parentClaudeId };
  return { ...(await result(d, id)), resumed_at: new Date().toISOString(), forked: true, forked_from: parent.session_id, previous_state: previous };
}

/** What a resume or fork checked and chose; the runner makes its launch plan of it once the record is final. */
interface ResumePlan {
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

/** The runner's plan for the session `r` (its id, team names and variables). */
function planFor(d: Deps, p: ResumePlan, r: SessionRecord, env: Record<string, string>, message: string | undefined, all: Record<string, SessionRecord>): RunnerPlan {
  return planOf(p.runner, launchRequest(d, { id: r.session_id, cwd: p.cwd, claude: p.claude, mode: p.mode, opts: p.opts, doppler: p.doppler, env: sessionEnv(r, env), options: { ...p.options, ...p.transient }, team: teamOf(r), sandbox: p.sandbox, ...carryOf(p.runner, message, r, all) }));
}

/** Filled by relaunch when the message travelled with the launch: when Claude accepted it, and its number. */
export interface CarryOut {
  sent_at?: string;
  promptNo?: number;
}

/** The message of a resume or fork: carried with the launch when its plan took it (launch.ts), else typed once ready. */
async function firstMessage(d: Deps, id: string, message: string | undefined, carried: Promise<Delivery> | undefined, ctx: CallContext): Promise<void> {
  if (carried) await confirmCarried(d, id, message!, carried);
  else if (message !== undefined) await deliverPrompt(d, id, message, ctx);
}

/** Claude's options a resume may change: given ones replace the stored ones (an empty list or text clears it). */
const CHANGEABLE = ["model", "permission_mode", "allowed_tools", "disallowed_tools", "add_dirs", "append_system_prompt"] as const;

/** Every check of a resume or fork (the same as start_session's), and the argv it will run. */
async function planLaunch(d: Deps, rec: SessionRecord, input: ResumeInput, env: Record<string, string>, mode: LaunchMode, ctx: CallContext, forId = rec.session_id): Promise<ResumePlan> {
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

/**
 * A session this server started that never took a prompt has no conversation to resume: it starts again, fresh, with
 * its id and options (with a new Claude session id, as the CLI refuses an id whose transcript exists). An adopted
 * conversation (no spawn recorded) or one whose transcript is there is resumed as always.
 */
async function neverPrompted(d: Deps, rec: SessionRecord): Promise<boolean> {
  if (rec.generation === undefined) return false;
  const f = (await d.registry.follow(rec.session_id)).fold;
  if (f.prompts_submitted > 0) return false;
  return !(await stat(transcriptPath(d.cfg.claudeConfigDir, rec.cwd, f.claude_session_id ?? rec.claude_session_id)).then(
    () => true,
    () => false,
  ));
}

/** resume_at names a message of the conversation being resumed (get_conversation lists their uuids). */
async function checkResumeAt(d: Deps, rec: SessionRecord, claudeId: string, at: string): Promise<void> {
  const path = d.registry.followed(rec.session_id)?.fold.transcript_path ?? transcriptPath(d.cfg.claudeConfigDir, rec.cwd, claudeId);
  if (await hasEntry(path, at)) return;
  throw new SessionError("INVALID_ARGUMENT", `resume_at ${at} is not a message of conversation ${claudeId}; nothing was started.`, {
    suggestion: `get_conversation {claude_session_id: "${claudeId}"} lists each message's uuid.`,
  });
}

/** Only an ended session can be resumed: a live one is talked to with send_message. */
async function assertNotRunning(d: Deps, rec: SessionRecord): Promise<void> {
  // The fold this server follows is newer than the stored record (which is written in batches).
  const status = d.registry.followed(rec.session_id)?.fold.status ?? rec.status;
  if (!isLive(status)) return;
  const b = d.runners[rec.backend]?.backend;
  // A terminal that outlives servers is asked; a process owned by a server (pty, headless) is running while its
  // record says so, unless it is this server's and has ended.
  const l = b ? (await b.list()).get(rec.session_id) : undefined;
  const running = b && (b.survivesRestart ? l?.alive === true : (l?.alive ?? true));
  if (running) {
    throw new SessionError("INVALID_ARGUMENT", `session ${rec.session_id} is still running (${status}); only an ended session can be resumed.`, {
      suggestion: "Use send_message to talk to it, or kill_session first.",
    });
  }
}

async function adoptConversation(d: Deps, claudeSessionId: string, cwd: string, backend?: BackendKind): Promise<SessionRecord> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(claudeSessionId)) {
    throw new SessionError("INVALID_ARGUMENT", "claude_session_id must be the UUID of a Claude Code conversation.");
  }
  const existing = Object.values((await d.store.read()).sessions).find((r) => r.claude_session_id === claudeSessionId);
  if (existing) return structuredClone(existing);
  const id = newSessionId();
  const rec = newRecord({ session_id: id, claude_session_id: claudeSessionId, backend: backend ?? d.defaultKind, status: "dead", cwd });
  await d.store.update((s) => {
    s.sessions[id] = rec;
  });
  return rec;
}
