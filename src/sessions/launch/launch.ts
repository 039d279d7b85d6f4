/**
 * start_session and resume_session: check everything, write the record under the lock, spawn the process in its
 * backend, and let the driver take it to its first prompt. A start that fails leaves the record in `error` with
 * the reason, and no process behind.
 */
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import type { StartInput, StartOutput } from "../../api/index.js";
import { childEnv, type LaunchMode } from "../../claude/launch.js";
import { claudeIdOf } from "../../runners/runner.js";
import type { CallContext } from "../../core/context.js";
import { newRecord, type SessionRecord } from "../../store/schema.js";
import { assertRoom } from "../checks.js";
import { admitStart } from "./admit.js";
import {
  checkChosenId,
  pickClaudeOptions,
  sameStart,
  startFieldHashes,
  startFingerprint,
  storedHeadlessOptions,
  transientOptions,
} from "./options.js";
import { type Deps, type Runner } from "../deps.js";
import { confirmCarried, deliverPrompt } from "../turn/keys.js";
import { checkBudget } from "../spend/budget.js";
import { poolLeft } from "../spend/pool.js";
import { startView } from "../views.js";
import { setVersion } from "./options.js";
import { claimTeammate } from "../teams/team.js";
import { makeWorktree, removeWorktree, type WorktreeInfo } from "./worktree.js";
import { launch, launchRequest, planOf, sessionEnv } from "./spawn.js";

/** What the server adds to a start that no caller may ask for: `budgetPool`, a budgeted lead's teammate's pool (pool.ts). */
export interface StartExtra {
  budgetPool?: string;
}

export async function start(d: Deps, input: StartInput, ctx: CallContext, extra: StartExtra = {}): Promise<StartOutput> {
  return (await startSession(d, input, ctx, undefined, extra)).started;
}

/**
 * start_session, and when the call had a prompt that this call delivered, when it was sent (run_task waits for its
 * turn). `launched` is called once the session is up, before its prompt is confirmed; with a prompt the launch
 * carries, already once the process holds it (launch's `holding`), and again when the session is up.
 */
export async function startSession(
  d: Deps,
  input: StartInput,
  ctx: CallContext,
  launched?: () => void,
  extra: StartExtra = {},
): Promise<{ started: StartOutput; sent_at?: string }> {
  const fingerprint = startFingerprint(input);
  if (input.session_id !== undefined) {
    checkChosenId(input.session_id);
    const existing = await d.store.get(input.session_id);
    if (existing && sameStart(existing, input)) return { started: withStream(await result(d, existing.session_id), input) };
  }
  const {
    callerCwd,
    permissionMode,
    kind,
    runner,
    claude,
    version,
    doppler,
    sandbox,
    env,
    mcpServers,
    prompt,
    id,
    plan,
    logFile,
    account,
  } = await admitStart(d, input, ctx);
  let worktree: WorktreeInfo | undefined;
  if (plan) {
    try {
      worktree = await makeWorktree(plan, childEnv(process.env, env), logFile?.path ?? d.registry.paths(id).rawLogPath);
    } catch (e) {
      if (logFile) await rm(logFile.path, { force: true });
      // The session's folder held only the setup log (unless another call took the id meanwhile).
      if (!(await d.store.get(id))) await rm(d.registry.paths(id).dir, { recursive: true, force: true });
      throw e;
    }
  }
  const cwd = plan ? plan.cwd : callerCwd;
  const claudeSessionId = randomUUID();
  const opts = pickClaudeOptions({ ...input, permission_mode: permissionMode });
  const mode: LaunchMode = { kind: "new", claudeSessionId };
  const rec = newRecord({
    session_id: id,
    claude_session_id: claudeSessionId,
    backend: kind,
    status: "starting",
    created_at: new Date().toISOString(),
    cwd,
    command: claude,
    args: [],
    env_names: Object.keys(env).sort(),
    options: {
      ...opts,
      ...(input.trust_workspace ? { trust_workspace: true } : {}),
      ...(input.team_lead ? { team_lead: true } : {}),
      start_fingerprint: fingerprint,
      start_fields: startFieldHashes(input),
      ...storedHeadlessOptions(runner, input),
    },
    generation: 1,
  });
  if (doppler?.project) rec.doppler_project = doppler.project;
  if (doppler?.config) rec.doppler_config = doppler.config;
  if (sandbox) rec.sandbox = sandbox;
  if (account) rec.account = account;
  if (input.on_limit) rec.on_limit = input.on_limit;
  if (input.team_name) rec.team_name = input.team_name;
  if (input.teammate_name) rec.teammate_name = input.teammate_name;
  if (input.model) rec.model = input.model;
  rec.permission_mode = permissionMode;
  // Known already (every start after the first): recorded now; else recorded once the process runs (below).
  const known = await Promise.race([
    version.then((v) => ({ v })),
    new Promise<undefined>((res) => setImmediate(() => res(undefined))),
  ]);
  if (known) setVersion(rec, known.v);
  // A runner with its own agentic turn limit keeps max_turns in options; elsewhere the server counts prompts.
  if (input.max_turns !== undefined && !runner.caps.ownTurnLimit) rec.max_turns = input.max_turns;
  if (input.max_budget_usd !== undefined) rec.max_budget_usd = input.max_budget_usd;
  if (extra.budgetPool !== undefined) rec.budget_pool = extra.budgetPool;
  if (worktree) rec.worktree = worktree;
  if (logFile) {
    rec.log_file = logFile.path;
    rec.log_file_id = { dev: logFile.dev, ino: logFile.ino };
  }
  const transient = transientOptions({ ...input, mcp_servers: mcpServers });
  const carry = carryOf(runner, prompt, rec, rec.budget_pool !== undefined ? (await d.store.read()).sessions : {});
  const launchPlan = planOf(
    runner,
    launchRequest(d, {
      id,
      cwd,
      claude,
      mode,
      opts,
      doppler,
      env: sessionEnv(rec, env),
      options: { ...rec.options, ...transient },
      team: teamOf(rec),
      sandbox: rec.sandbox,
      account: rec.account,
      ...carry,
    }),
  );
  [rec.command, ...rec.args] = launchPlan.command as [string, ...string[]];
  // Counting, naming and inserting under one lock: two servers cannot both take the last place or one teammate name.
  let existing = false;
  try {
    await d.store.update((s) => {
      const there = s.sessions[id];
      if (there) {
        existing = sameStart(there, input);
        return;
      }
      assertRoom(d.cfg, s.sessions);
      claimTeammate(s.sessions, rec);
      s.sessions[id] = rec;
    });
  } catch (e) {
    if (logFile) await rm(logFile.path, { force: true });
    if (worktree) await removeWorktree(worktree, { force: true, deleteBranch: true });
    throw e;
  }
  // The same id and options, started by another call a moment ago: that session.
  if (existing) return { started: withStream(await result(d, id), input) };
  const { carried } = await launch(
    d,
    rec,
    runner,
    launchPlan,
    claudeIdOf(mode),
    Boolean(input.trust_workspace),
    ctx,
    launchPlan.carriesPrompt ? prompt : undefined,
    launched,
  );
  launched?.();
  if (!known) {
    const v = await version;
    await d.store.patch(id, (r) => setVersion(r, v));
  }
  let sent: string | undefined;
  if (carried) sent = await confirmCarried(d, id, prompt!, carried);
  else if (prompt !== undefined) sent = await deliverPrompt(d, id, prompt, ctx);
  return { started: withStream(await result(d, id), input), ...(sent !== undefined ? { sent_at: sent } : {}) };
}

/**
 * The first prompt travels with the launch when the runner can send it so (headless: in the SDK's input from the
 * spawn; tmux/pty: Claude's argument after `--`; the CLI takes it once it is up, as `claude -p` does), with no wait
 * for ready and no delivery in between (start, resume and fork). A prompt the budget refuses goes the old way, to its
 * error. What to hand the runner's plan; the plan says whether it took it (`carriesPrompt`).
 */
export function carryOf(
  runner: Runner,
  prompt: string | undefined,
  r: SessionRecord,
  all: Record<string, SessionRecord>,
): { prompt?: string } {
  if (prompt === undefined || runner.driver.carried === undefined) return {};
  try {
    checkBudget(r);
  } catch {
    return {};
  }
  // A team budget pool that is spent (pool.ts): the prompt goes the old way too, to its LIMIT_REACHED.
  return poolLeft(r, all) ? { prompt } : {};
}

/** stream_output: the transcript resource the transport subscribes its client to (server/server.ts). */
export function withStream(out: StartOutput, input: StartInput): StartOutput {
  return input.stream_output ? { ...out, output_resource: `session://${out.session_id}/transcript` } : out;
}

/** A team session's member server settings: whether the record is in a team, and its lead. */
export function teamOf(r: SessionRecord): { lead: boolean } | undefined {
  return r.team_name ? { lead: r.options.team_lead === true } : undefined;
}

export async function result(d: Deps, id: string): Promise<StartOutput> {
  await d.registry.flushed();
  const r = await d.registry.record(id);
  return startView(
    r,
    d.registry.followed(id)?.fold.status ?? r.status,
    d.runners[r.backend]?.host.attachCommand?.(id),
    d.cfg.stateDir,
  );
}
