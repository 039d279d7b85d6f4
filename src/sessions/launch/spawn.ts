/**
 * A session's process: what the session layer hands its runner (launchRequest, planOf), and the launch itself (the
 * session's files, the spawn, the wait until it takes prompts), with what a start that fails leaves behind. Used by
 * start (launch.ts), resume, fork and wake (resume.ts).
 */
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import { accountEnv, accountNamed } from "../../claude/accounts.js";
import { ensureWindowsDir, windowsFile } from "../../claude/account-windows.js";
import type { ClaudeOptions, DopplerWrap, LaunchMode } from "../../claude/launch.js";
import { promptMarkPath } from "../../claude/hooks.js";
import type { LaunchPlan, LaunchRequest } from "../../runners/runner.js";
import type { Delivery } from "../../runners/driver.js";
import { withoutSignal, type CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { createLogWith } from "../../events/eventlog.js";
import type { LogEvent } from "../../events/reducer.js";
import type { SessionRecord } from "../../store/schema.js";
import { briefText } from "../../util/terminal-text.js";
import { assertOwnedScript } from "../../util/fs/owned.js";
import type { Deps, Runner } from "../deps.js";
import { armDeadline } from "../life/limits.js";
import { beginTurn } from "../spend/cost.js";
import { policyEnv } from "./options.js";
import { memberLaunch } from "../teams/members.js";
import { sandboxLaunch, type SandboxChoice } from "./sandbox.js";

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
  for (const f of [p.eventsPath, `${p.eventsPath}.lock`, promptMarkPath(p.eventsPath), p.rawLogPath])
    await writeFile(f, "", { flag: "a", mode: 0o600 });
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
