/**
 * start_session and resume_session: check everything, write the record under the lock, spawn the process in its
 * backend, and let the driver take it to its first prompt. A start that fails leaves the record in `error` with
 * the reason, and no process behind.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import type { StartInput, StartOutput } from "../../api/index.js";
import { accountEnv, accountNamed } from "../../claude/accounts.js";
import { ensureWindowsDir, windowsFile } from "../../claude/account-windows.js";
import { childEnv, type ClaudeOptions, type DopplerWrap, type LaunchMode } from "../../claude/launch.js";
import { claudeIdOf, type LaunchPlan, type LaunchRequest } from "../../runners/runner.js";
import type { Delivery } from "../../runners/driver.js";
import { withoutSignal, type CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { createLogWith } from "../../events/eventlog.js";
import type { LogEvent } from "../../events/reducer.js";
import { newRecord, type SessionRecord } from "../../store/schema.js";
import { briefText } from "../../util/terminal-text.js";
import { assertOwnedScript } from "../../util/fs/owned.js";
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
import { armDeadline } from "../life/limits.js";
import { confirmCarried, deliverPrompt } from "../turn/keys.js";
import { checkBudget } from "../spend/budget.js";
import { beginTurn } from "../spend/cost.js";
import { poolLeft } from "../spend/pool.js";
import { startView } from "../views.js";
import { policyEnv, setVersion } from "./options.js";
import { claimTeammate } from "../teams/team.js";
import { makeWorktree, removeWorktree, type WorktreeInfo } from "./worktree.js";
import { memberLaunch } from "../teams/members.js";
import { sandboxLaunch, type SandboxChoice } from "./sandbox.js";

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

/** The runner's plan, with the member server's files (written by launch() before the spawn). */
export function planOf(runner: Runner, req: LaunchRequest): LaunchPlan {
  const plan = runner.plan(req);
  return req.member ? { ...plan, files: [...(plan.files ?? []), ...req.member.files] } : plan;
}

/** What the session layer hands a runner to plan a launch: the session's paths, size, binary, options and variables. */
export function launchRequest(
  d: Deps,
  o: {
    id: string;
    cwd: string;
    claude: string;
    mode: LaunchMode;
    opts: ClaudeOptions;
    doppler: DopplerWrap | undefined;
    env: Record<string, string>;
    options: Record<string, unknown>;
    team?: { lead: boolean } | undefined;
    prompt?: string;
    sandbox?: SandboxChoice | undefined;
    account?: string | undefined;
  },
): LaunchRequest {
  const p = d.registry.paths(o.id);
  // A team member gets its own MCP server (issue 25) with a secret made for this process.
  const m = o.team ? memberLaunch(d.cfg.stateDir, p.dir, o.id, o.team.lead) : undefined;
  // Under an account, the CLI's report of the account's usage windows goes to the account's file (account-windows.ts).
  const windows = o.account ? windowsFile(d.cfg.stateDir, o.account) : undefined;
  if (windows) ensureWindowsDir(d.cfg.stateDir);
  return {
    id: o.id,
    dir: p.dir,
    cwd: o.cwd,
    settingsPath: p.settingsPath,
    eventsPath: p.eventsPath,
    rawLogPath: p.rawLogPath,
    cols: d.cfg.cols,
    rows: d.cfg.rows,
    claude: o.claude,
    mode: o.mode,
    claudeOptions: o.opts,
    doppler: o.doppler,
    // The account's CLAUDE_CONFIG_DIR or API key: in the child's environment only (never argv, the record or a log).
    env: {
      ...o.env,
      ...policyEnv(d.cfg),
      ...m?.env,
      ...(o.account ? accountEnv(accountNamed(d.cfg.accountsFile, o.account)) : {}),
    },
    options: o.options,
    ...(o.prompt !== undefined ? { prompt: o.prompt } : {}),
    ...(m ? { member: m.member } : {}),
    ...(windows ? { windowsFile: windows } : {}),
    ...(o.sandbox
      ? {
          sandbox: sandboxLaunch(d.cfg, o.sandbox, {
            dir: p.dir,
            cwd: o.cwd,
            eventsPath: p.eventsPath,
            addDirs: o.opts.add_dirs ?? [],
            envNames: Object.keys(o.env ?? {}),
          }),
        }
      : {}),
    // The blocking permission hook, unless CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS is 0 (a runner that answers itself ignores it).
    ...(d.cfg.permissionTimeoutMs > 0
      ? { permission: { script: d.scripts.permission, timeoutMs: d.cfg.permissionTimeoutMs } }
      : {}),
  };
}

/**
 * Spawns the process and waits until it takes prompts; on failure leaves the record in `error` with the reason.
 * `prompt`: the first prompt, which the plan carries (`carriesPrompt`): handed to the driver right after the spawn;
 * the result is its delivery, settled once it became a turn (the caller awaits it: confirmCarried).
 * `holding`: the caller takes over a cancel once the process holds the carried prompt (run_task: it interrupts the
 * prompt's turn). It is called right after the spawn, unless the call was already cancelled, and the wait for start-up
 * then goes on whatever the call's signal says: a cancel no longer ends the process. Without it, a cancel before
 * the session is up ends the process.
 */
export async function launch(
  d: Deps,
  rec: SessionRecord,
  runner: Runner,
  plan: LaunchPlan,
  claudeId: string,
  trust: boolean,
  ctx: CallContext,
  prompt?: string,
  holding?: () => void,
): Promise<{ carried?: Promise<Delivery> }> {
  const id = rec.session_id;
  const since = new Date();
  const p = d.registry.paths(id);
  const { host, driver } = runner;
  await mkdir(p.dir, { recursive: true, mode: 0o700 });
  const spawnEvent: LogEvent = { hook_event_name: "cs:spawn", claude_session_id: claudeId };
  if (rec.generation) spawnEvent.generation = rec.generation;
  // A new session's log is made with its cs:spawn in it, with no lock (issue 38: one flock less before the CLI starts);
  // a log that is there already (a resume, a wake, a relaunch) gets the line through the locked path below.
  const made = await createLogWith(p.eventsPath, spawnEvent);
  // The files the session's hooks and terminal append to exist before they run, the owner's alone.
  for (const f of [p.eventsPath, `${p.eventsPath}.lock`, p.rawLogPath]) await writeFile(f, "", { flag: "a", mode: 0o600 });
  for (const script of plan.hookScripts) await assertOwnedScript(script);
  // Written again at every launch: no fsync (a crash loses nothing the next launch does not write).
  await writeFileAtomic(p.settingsPath, JSON.stringify(plan.settings, null, 2) + "\n", { mode: 0o600, fsync: false });
  for (const f of plan.files ?? []) await writeFileAtomic(f.path, f.text, { mode: 0o600, fsync: false });
  await linkRawLog(d, rec);
  const s = await d.registry.handle(id);
  if (!made) await s.emit(spawnEvent);
  // The turn's transcript offsets are taken at once (beginTurn's first, synchronous step), before the CLI can write;
  // recording them goes on while the CLI starts, and the launch waits for it after the spawn.
  const begun = prompt !== undefined ? beginTurn(d, rec, s.live.fold, s.live.fold.prompts_submitted + 1, prompt) : undefined;
  begun?.catch(() => {});

  let spawned;
  try {
    spawned = await plan.spawn({ live: s.live, generation: rec.generation });
  } catch (e) {
    await failStart(d, id, e instanceof SessionError ? e.message : String(e), since);
    throw e instanceof SessionError ? e : new SessionError("PROCESS_ERROR", `could not start the terminal: ${String(e)}`);
  }
  const startedAt = new Date().toISOString();
  const carried = prompt !== undefined && driver.carried ? driver.carried(s, prompt, d.cfg.startTimeoutMs, ctx) : undefined;
  // Awaited by the caller once the start is done; a start that fails ends the process, and so this wait.
  carried?.catch(() => {});
  const held = carried !== undefined && holding !== undefined && !ctx.signal?.aborted;
  if (held) holding();
  await d.store.patch(id, (r) => {
    r.pid = spawned.pid;
    r.host = spawned.ref;
  });
  await begun;

  const t0 = Date.now();
  try {
    await driver.awaitReady(
      s,
      {
        trustWorkspace: trust,
        timeoutMs: d.cfg.startTimeoutMs,
        underDoppler: plan.underDoppler,
        ...(carried ? { promptCarried: true } : {}),
      },
      held ? withoutSignal(ctx) : ctx,
    );
  } catch (e) {
    await host.kill(id, { graceMs: 1000 }).catch(() => {});
    await host.remove(id).catch(() => {});
    await failStart(d, id, e instanceof SessionError && e.code !== "CANCELLED" ? e.message : "cancelled", since);
    throw e;
  }
  await d.registry.flushed();
  const updated = await d.store.patch(id, (r) => {
    r.started_at = startedAt;
    r.process_started_at = startedAt;
    r.last_active = new Date().toISOString();
  });
  if (updated) armDeadline(d, updated);
  d.log.info(`${id} ready in ${Date.now() - t0} ms (${host.kind}, claude ${claudeId})`);
  return carried ? { carried } : {};
}

/**
 * The terminal's raw output goes to <dir>/output.log, a path the server made. A session with a log_file gets
 * output.log as a link to that file, which the server created for it; a file found there that is not that one
 * (replaced since) is not written or read.
 */
async function linkRawLog(d: Deps, r: SessionRecord): Promise<void> {
  if (!r.log_file || !r.log_file_id) return;
  const raw = d.registry.paths(r.session_id).rawLogPath;
  await rm(raw, { force: true });
  await symlink(r.log_file, raw);
}

async function failStart(d: Deps, id: string, why: string, since: Date): Promise<void> {
  const brief = briefText(why);
  const r = await d.store.get(id);
  // The execution history has every start that never took prompts (a turn-less record: prompt "").
  d.history?.recordTurn({
    session_id: id,
    ...(r ? { claude_session_id: r.claude_session_id } : {}),
    prompt: "",
    started_at: since,
    ended_at: new Date(),
    outcome: "start_failed",
    error: brief,
  });
  await d.registry.emit(id, { hook_event_name: "cs:start_failed", message: brief }).catch(() => {});
  await d.registry.flushed();
  await d.store.patch(id, (r) => {
    r.status = "error";
    r.error_log = [...r.error_log, `${new Date().toISOString()} start failed: ${brief}`].slice(-20);
    delete r.pid;
  });
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

/**
 * The session's own variables on top of the caller's `env`: its id and team names, for hooks and tools inside.
 * (launch() adds the design's CLAUDE_SESSION_ID: the Claude session's UUID, as the design has it. With this
 * server's short id in it, the real CLI 2.1.330 often did not take the first prompt of sessions started in parallel.)
 */
export function sessionEnv(r: SessionRecord, env: Record<string, string>): Record<string, string> {
  return {
    ...env,
    CLAUDE_SESSIONS_ID: r.session_id,
    // The design's name for the same id.
    ...(r.team_name ? { CLAUDE_TEAM_NAME: r.team_name } : {}),
    ...(r.teammate_name ? { CLAUDE_TEAMMATE_NAME: r.teammate_name } : {}),
  };
}
