/**
 * resume_session: a new process for an ended session (the same conversation, or a fork of it), or the adoption
 * of any Claude Code conversation by its id and cwd. Checks as start_session does, then launches (launch.ts).
 */
import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { ResumeInput, ResumeOutput } from "../api/index.js";
import { buildClaudeArgs, childEnv, wrapWithDoppler, type LaunchMode } from "../claude/launch.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import type { BackendKind } from "../core/events.js";
import { isLive } from "../core/status.js";
import { newRecord, type SessionRecord } from "../store/schema.js";
import { withFileLock } from "../util/flock.js";
import { endTree, sessionTag, sessionTree } from "../util/proctree.js";
import { assertOwnedScript, isSameFile } from "../util/owned.js";
import { assertRoom, checkCwd, checkEnv, checkPermissionMode, checkPrompt, claudeBinary, dopplerFor, storedDoppler } from "./checks.js";
import { checkBackendOptions, optionsFor, transientOptions } from "./backend-options.js";
import { checkResumeBudget } from "./budget.js";
import { runnerOf, type Deps } from "./deps.js";
import { pickClaudeOptions } from "./claude-options.js";
import { deliverPrompt } from "./turns.js";
import { setVersion, versionOf, withMode } from "./cli-policy.js";
import { dopplerChoice } from "./start-options.js";
import { claimTeammate } from "./team.js";
import { assertOutsideState } from "./confine.js";
import { checkHeadlessTrust, checkMcpServers, checkTrustWorkspace, checkWidening } from "./gates.js";
import { launch, newSessionId, result, sessionEnv } from "./launch.js";

/**
 * Two resume_session calls of one session at once: in this process the second gets the first one's result;
 * across processes a lock file orders them and the later one finds the session running (SESSION_BUSY).
 */
export async function resume(d: Deps, input: ResumeInput, ctx: CallContext): Promise<ResumeOutput> {
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
  const message = input.message !== undefined ? checkPrompt(d.cfg, input.message, "message") : undefined;
  const env = checkEnv(d.cfg, input.env);
  checkTrustWorkspace(d.cfg, input.trust_workspace);
  let rec: SessionRecord;
  if (input.session_id) {
    rec = await d.registry.record(input.session_id);
  } else if (input.claude_session_id) {
    if (!input.cwd) throw new SessionError("INVALID_ARGUMENT", "adopting a conversation needs its cwd as well as claude_session_id.");
    rec = await adoptConversation(d, input.claude_session_id, await checkCwd(input.cwd), input.backend);
  } else {
    throw new SessionError("INVALID_ARGUMENT", "pass session_id (a session of this server) or claude_session_id with cwd (any Claude Code conversation).");
  }
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

async function relaunch(d: Deps, rec: SessionRecord, input: ResumeInput, message: string | undefined, env: Record<string, string>, ctx: CallContext): Promise<ResumeOutput> {
  const cwd = input.cwd ? await checkCwd(input.cwd) : rec.cwd;
  const kind = input.backend ?? rec.backend;
  const runner = runnerOf(d, kind);
  const claude = claudeBinary(d.cfg);
  const dopplerWanted = dopplerChoice(input) ?? storedDoppler(rec);
  checkBackendOptions(kind, input, dopplerWanted !== undefined);
  checkResumeBudget(rec, input);
  const doppler = dopplerFor(d.cfg, dopplerWanted);
  // A resumed session keeps its recorded mode (one started by an older server without one gets the default).
  const options = withMode(d.cfg, optionsFor(kind, rec.options, input));
  const opts = pickClaudeOptions(options);
  checkPermissionMode(d.cfg, opts.permission_mode);
  await assertOutsideState(d.cfg.stateDir, [[cwd, "cwd"], ...(opts.add_dirs ?? []).map((a) => [a, "add_dirs entry"] as const)]);
  checkWidening(d.cfg, opts);
  const mcpServers = kind === "headless" ? checkMcpServers(d.cfg, input.mcp_servers) : input.mcp_servers;
  // A trust_workspace stored before the operator turned it off is not acted on.
  const trust = Boolean(input.trust_workspace ?? (d.cfg.allowTrustWorkspace && rec.options.trust_workspace));
  await checkHeadlessTrust(kind, cwd, childEnv(process.env, env), trust);
  if (rec.log_file && rec.log_file_id && !(await isSameFile(rec.log_file, rec.log_file_id))) {
    throw new SessionError("INVALID_ARGUMENT", `the session's log_file ${JSON.stringify(rec.log_file)} is no longer the file this server created for it; nothing was started.`, {
      suggestion: "Restore the file, or start a new session with a new log_file.",
    });
  }
  await assertOwnedScript(d.scripts.hook);
  const version = await versionOf(claude);
  const newId = input.fork ? randomUUID() : undefined;
  const mode: LaunchMode = { kind: "resume", resumeId: rec.claude_session_id, ...(newId ? { fork: { newId } } : {}) };
  const p = d.registry.paths(rec.session_id);
  const claudeArgv = [claude, ...buildClaudeArgs(mode, p.settingsPath, opts)];
  const argv = doppler ? wrapWithDoppler(claudeArgv, doppler) : claudeArgv;
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
    r.cwd = cwd;
    r.backend = kind;
    r.options = options;
    r.permission_mode = options.permission_mode;
    setVersion(r, version);
    r.command = argv[0]!;
    r.args = argv.slice(1);
    r.env_names = [...new Set([...r.env_names, ...Object.keys(env)])].sort();
    if (newId) r.claude_session_id = newId;
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
  await launch(d, updated, runner, argv, mode, sessionEnv(rec, env), trust, ctx, transientOptions({ ...input, mcp_servers: mcpServers }));
  if (message !== undefined) await deliverPrompt(d, rec.session_id, message, ctx);
  return { ...(await result(d, rec.session_id)), resumed_at: new Date().toISOString(), forked: Boolean(newId), previous_state: previous };
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
