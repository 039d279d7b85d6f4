/**
 * resume_session: a new process for an ended session (the same conversation, or a fork of it), or the adoption
 * of any Claude Code conversation by its id and cwd. Checks as start_session does, then launches (spawn.ts).
 */
import { randomUUID } from "node:crypto";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ResumeInput, ResumeOutput } from "../../api/index.js";
import { type LaunchMode } from "../../claude/launch.js";
import { transcriptPath } from "../../claude/transcript.js";
import { configDirFor } from "../../claude/accounts.js";
import type { LaunchPlan as RunnerPlan } from "../../runners/runner.js";
import { claudeIdOf } from "../../runners/runner.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { BackendKind } from "../../core/events.js";
import { isLive } from "../../core/status.js";
import { newRecord, type SessionRecord } from "../../store/schema.js";
import { withFileLock } from "../../util/proc/flock.js";
import { endLeftovers } from "../../runners/end-tree.js";
import { ANY_RUNNER, assertRoom, checkCwd, checkEnv, checkPrompt } from "../checks.js";
import { newSessionId } from "./options.js";
import { type Deps } from "../deps.js";
import { confirmCarried, deliverPrompt } from "../turn/keys.js";
import type { Delivery } from "../../runners/driver.js";
import { setVersion } from "./options.js";
import { claimTeammate } from "../teams/team.js";
import { assertInRoots } from "./roots.js";
import { checkTrustWorkspace } from "../gates.js";
import { admitResume, type ResumePlan } from "./admit.js";
import { carryTranscript } from "./switch-account.js";
import { carryOf, result, teamOf } from "./launch.js";
import { launch, launchRequest, planOf, sessionEnv } from "./spawn.js";

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
    if (!input.cwd)
      throw new SessionError("INVALID_ARGUMENT", "adopting a conversation needs its cwd as well as claude_session_id.");
    const cwd = await checkCwd(input.cwd);
    // Before anything is recorded for the adopted conversation.
    await assertInRoots(d.cfg, ctx, [[cwd, "cwd"]]);
    rec = await adoptConversation(d, input.claude_session_id, cwd, input.backend);
  } else {
    throw new SessionError(
      "INVALID_ARGUMENT",
      "pass session_id (a session of this server) or claude_session_id with cwd (any Claude Code conversation).",
    );
  }
  // The rules of the runner it will run on (a headless session's message may hold what the input box must refuse).
  const message =
    input.message !== undefined
      ? checkPrompt(d.cfg, input.message, "message", false, d.runners[input.backend ?? rec.backend]?.caps)
      : undefined;
  // A fork is a new session: its parent may run on (and keeps its record and generation).
  if (input.fork) return fork(d, rec, input, message, env, ctx);
  // Whichever way it was named, a running session is not started a second time.
  await assertNotRunning(d, rec);
  const seen = rec.generation ?? 0;
  await mkdir(d.registry.paths(rec.session_id).dir, { recursive: true, mode: 0o700 });
  return withFileLock(
    join(d.registry.paths(rec.session_id).dir, "resume.lock"),
    async () => {
      const now = await d.registry.record(rec.session_id);
      if ((now.generation ?? 0) !== seen) {
        throw new SessionError("SESSION_BUSY", `session ${rec.session_id} was resumed by another call a moment ago.`, {
          suggestion: "Use send_message to talk to it (list_sessions shows its status).",
        });
      }
      return relaunch(d, now, input, message, env, ctx);
    },
    { timeoutMs: d.cfg.startTimeoutMs * 2, ...(ctx.signal ? { signal: ctx.signal } : {}) },
  );
}

/**
 * `carry` (a wake's prompt): the message goes only if the launch can carry it (launch.ts); never typed here, as the
 * caller holds the session's keys. `carry.sent_at` and `carry.promptNo` say it went, once Claude accepted it.
 */
export async function relaunch(
  d: Deps,
  rec: SessionRecord,
  input: ResumeInput,
  message: string | undefined,
  env: Record<string, string>,
  ctx: CallContext,
  carry?: CarryOut,
): Promise<ResumeOutput> {
  const fresh = await neverPrompted(d, rec);
  if (fresh && input.resume_at !== undefined) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `resume_at ${input.resume_at} is not a message of session ${rec.session_id}: it never took a prompt; nothing was started.`,
      {
        suggestion:
          "get_conversation lists the message uuids of a conversation; this session has none yet: resume it without resume_at " +
          "(it starts again with its options).",
      },
    );
  }
  const mode: LaunchMode = fresh
    ? { kind: "new", claudeSessionId: randomUUID() }
    : { kind: "resume", resumeId: rec.claude_session_id, ...(input.resume_at ? { at: input.resume_at } : {}) };
  const plan = await admitResume(d, rec, input, env, mode, ctx);
  const { options, runner, kind, cwd, doppler, version } = plan;
  // Another account (resume_session {account}, on_limit switch_account): the conversation goes with it.
  if (mode.kind === "resume" && plan.account !== rec.account)
    await carryTranscript(d, rec.cwd, mode.resumeId, rec.account, plan.account);
  let launchPlan: RunnerPlan | undefined;
  const previous = {
    created_at: rec.created_at,
    ...(rec.last_active ? { last_active: rec.last_active } : {}),
    claude_session_id: rec.claude_session_id,
  };

  // Clear what is left of the old terminal before reusing its name, and let the old process finish: when its
  // terminal died under it (tmux killed), Claude may still be on its way out, and its late SessionEnd would
  // otherwise land after the new cs:spawn and end the new process's fold. Found by the session's tag, never by
  // a stored pid that may have been reused.
  await d.runners[rec.backend]?.host.remove(rec.session_id).catch(() => {});
  const lingering = await endLeftovers(rec.session_id, 1500);
  if (lingering) d.log.info(`${rec.session_id}: ended ${lingering} process(es) of its previous run before resuming`);
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
    if (plan.account) r.account = plan.account;
    else delete r.account;
    launchPlan = planFor(d, plan, r, env, message, s.sessions);
    [r.command, ...r.args] = launchPlan.command as [string, ...string[]];
    r.env_names = [...new Set([...r.env_names, ...Object.keys(env)])].sort();
    if (input.max_budget_usd !== undefined) r.max_budget_usd = input.max_budget_usd;
    if (input.on_limit) r.on_limit = input.on_limit;
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
  const { carried } = await launch(
    d,
    updated,
    runner,
    launchPlan!,
    claudeIdOf(mode),
    plan.trust,
    ctx,
    launchPlan!.carriesPrompt ? message : undefined,
  );
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
async function fork(
  d: Deps,
  parent: SessionRecord,
  input: ResumeInput,
  message: string | undefined,
  env: Record<string, string>,
  ctx: CallContext,
): Promise<ResumeOutput> {
  const fold = d.registry.followed(parent.session_id)?.fold;
  const parentClaudeId = fold?.claude_session_id ?? parent.claude_session_id;
  const newClaudeId = randomUUID();
  const id = newSessionId();
  const plan = await admitResume(
    d,
    parent,
    input,
    env,
    {
      kind: "resume",
      resumeId: parentClaudeId,
      fork: { newId: newClaudeId },
      ...(input.resume_at ? { at: input.resume_at } : {}),
    },
    ctx,
    id,
  );
  const { options, mode, runner, kind, cwd, doppler, version } = plan;
  if (plan.account !== parent.account) await carryTranscript(d, parent.cwd, parentClaudeId, parent.account, plan.account);
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
  if (plan.account) rec.account = plan.account;
  if (parent.max_turns !== undefined) rec.max_turns = parent.max_turns;
  const onLimit = input.on_limit ?? parent.on_limit;
  if (onLimit) rec.on_limit = onLimit;
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
  const { carried } = await launch(
    d,
    rec,
    runner,
    launchPlan!,
    claudeIdOf(mode),
    plan.trust,
    ctx,
    launchPlan!.carriesPrompt ? message : undefined,
  );
  await firstMessage(d, id, message, carried, ctx);
  const previous = {
    created_at: parent.created_at,
    ...(parent.last_active ? { last_active: parent.last_active } : {}),
    claude_session_id: parentClaudeId,
  };
  return {
    ...(await result(d, id)),
    resumed_at: new Date().toISOString(),
    forked: true,
    forked_from: parent.session_id,
    previous_state: previous,
  };
}

/** The runner's plan for the session `r` (its id, team names and variables). */
function planFor(
  d: Deps,
  p: ResumePlan,
  r: SessionRecord,
  env: Record<string, string>,
  message: string | undefined,
  all: Record<string, SessionRecord>,
): RunnerPlan {
  return planOf(
    p.runner,
    launchRequest(d, {
      id: r.session_id,
      cwd: p.cwd,
      claude: p.claude,
      mode: p.mode,
      opts: p.opts,
      doppler: p.doppler,
      env: sessionEnv(r, env),
      options: { ...p.options, ...p.transient },
      team: teamOf(r),
      sandbox: p.sandbox,
      account: p.account,
      ...carryOf(p.runner, message, r, all),
    }),
  );
}

/** Filled by relaunch when the message travelled with the launch: when Claude accepted it, and its number. */
export interface CarryOut {
  sent_at?: string;
  promptNo?: number;
}

/** The message of a resume or fork: carried with the launch when its plan took it (launch.ts), else typed once ready. */
async function firstMessage(
  d: Deps,
  id: string,
  message: string | undefined,
  carried: Promise<Delivery> | undefined,
  ctx: CallContext,
): Promise<void> {
  if (carried) await confirmCarried(d, id, message!, carried);
  else if (message !== undefined) await deliverPrompt(d, id, message, ctx);
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
  return !(await stat(
    transcriptPath(
      configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, rec.account),
      rec.cwd,
      f.claude_session_id ?? rec.claude_session_id,
    ),
  ).then(
    () => true,
    () => false,
  ));
}

/** Only an ended session can be resumed: a live one is talked to with send_message. */
async function assertNotRunning(d: Deps, rec: SessionRecord): Promise<void> {
  // The fold this server follows is newer than the stored record (which is written in batches).
  const status = d.registry.followed(rec.session_id)?.fold.status ?? rec.status;
  if (!isLive(status)) return;
  const b = d.runners[rec.backend]?.host;
  // A terminal that outlives servers is asked; a process owned by a server (pty, headless) is running while its
  // record says so, unless it is this server's and has ended.
  const l = b ? (await b.list()).get(rec.session_id) : undefined;
  const running = b && (b.survivesRestart ? l?.alive === true : (l?.alive ?? true));
  if (running) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `session ${rec.session_id} is still running (${status}); only an ended session can be resumed.`,
      {
        suggestion: "Use send_message to talk to it, or kill_session first.",
      },
    );
  }
}

async function adoptConversation(d: Deps, claudeSessionId: string, cwd: string, backend?: BackendKind): Promise<SessionRecord> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(claudeSessionId)) {
    throw new SessionError("INVALID_ARGUMENT", "claude_session_id must be the UUID of a Claude Code conversation.");
  }
  const existing = Object.values((await d.store.read()).sessions).find((r) => r.claude_session_id === claudeSessionId);
  if (existing) return structuredClone(existing);
  const id = newSessionId();
  const rec = newRecord({
    session_id: id,
    claude_session_id: claudeSessionId,
    backend: backend ?? d.defaultKind,
    status: "dead",
    cwd,
  });
  await d.store.update((s) => {
    s.sessions[id] = rec;
  });
  return rec;
}
