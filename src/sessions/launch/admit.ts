/**
 * Admission: every check a start, a resume or a fork passes before anything is recorded or spawned, in one ordered
 * list (CHECKS, one line each; the first that fails is the error, and nothing was changed). A start asks with its
 * call; a resume or a fork with its call on a record, whose values count where the call gives none. The callers then
 * record, plan and launch (launch.ts, resume.ts); the warm pool, run_task, wake and the web and CLI paths all come
 * through start/resume, so through here.
 */
import type { ResumeInput, StartInput } from "../../api/index.js";
import { childEnv, type ClaudeOptions, type LaunchMode } from "../../claude/launch.js";
import { hasEntry, transcriptPath } from "../../claude/transcript.js";
import {
  accountEnv,
  accountLimits,
  accountNamed,
  configDirFor,
  pickAccount,
  prepareAccount,
  readAccounts,
} from "../../claude/accounts.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { BackendKind } from "../../core/events.js";
import type { PermissionModeName } from "../../core/modes.js";
import type { LaunchOptions } from "../../runners/runner.js";
import type { StoredOptions } from "../../store/options.js";
import type { SessionRecord } from "../../store/schema.js";
import { assertOwnedScript, createOwnedFile, isSameFile, type OwnedFile } from "../../util/fs/owned.js";
import { checkCwd, checkEnv, checkPermissionMode, checkPrompt, claudeBinary, dopplerFor, storedDoppler } from "../checks.js";
import { allRunners, runnerOf, type Deps, type Runner } from "../deps.js";
import { checkHeadlessTrust, checkMcpServers, checkWidening } from "../gates.js";
import { checkBudgetModels, checkResumeBudget } from "../spend/budget.js";
import { assertOutsideState } from "./confine.js";
import {
  checkBackendOptions,
  checkVersionOptions,
  dopplerChoice,
  effectiveMode,
  needsVersion,
  newSessionId,
  optionsFor,
  pickClaudeOptions,
  transientOptions,
  versionOf,
  withMode,
} from "./options.js";
import { assertInRoots } from "./roots.js";
import { checkSandboxEnv, sandboxBlocker, sandboxFor, type SandboxChoice } from "./sandbox.js";
import { planWorktree, type WorktreePlan } from "./worktree.js";

/** What asks to launch: a start's call, or a resume's or fork's call on a record (`forId`: the fork's new id). */
export type Ask =
  | { how: "start"; input: StartInput }
  | { how: "resume"; input: ResumeInput; rec: SessionRecord; env: Record<string, string>; mode: LaunchMode; forId: string };

/**
 * What the checks chose, filled in line by line: a check reads only what an earlier line set (`declare`: each field
 * is set by its check, none before).
 */
class Admission {
  addDirs: Array<[string, string]> = [];
  declare cwd: string;
  declare kind: BackendKind;
  declare runner: Runner;
  declare claude: string;
  declare version: Promise<string | undefined>;
  declare doppler: ReturnType<typeof dopplerFor>;
  declare permissionMode: PermissionModeName;
  /** resume: the record's options with the call's changes and the effective mode. */
  declare options: StoredOptions & { permission_mode: PermissionModeName };
  declare opts: ClaudeOptions;
  declare sandbox: SandboxChoice | undefined;
  declare env: Record<string, string>;
  declare mcpServers: StartInput["mcp_servers"];
  declare prompt: string | undefined;
  declare id: string;
  declare plan: WorktreePlan | undefined;
  declare trust: boolean;
  declare logFile: OwnedFile | undefined;
  /** The operator's account it runs under (the call's, else a resume's record's), if any. */
  declare account: string | undefined;

  constructor(
    readonly d: Deps,
    readonly ctx: CallContext,
    readonly ask: Ask,
  ) {}
}

type Check = (a: Admission) => void | Promise<void>;

/** Claude's options a resume may change: given ones replace the stored ones (an empty list or text clears it). */
const CHANGEABLE = ["model", "permission_mode", "allowed_tools", "disallowed_tools", "add_dirs", "append_system_prompt"] as const;

const start = (a: Admission) => (a.ask.how === "start" ? a.ask : undefined);
const resume = (a: Admission) => (a.ask.how === "resume" ? a.ask : undefined);
/** A fork's totals start at zero and its log_file is not its parent's. */
const isFork = (a: Admission) => a.ask.how === "resume" && a.ask.forId !== a.ask.rec.session_id;
/** The doppler choice of the call, else the record's. */
const dopplerWanted = (a: Admission) =>
  dopplerChoice(a.ask.input) ?? (a.ask.how === "resume" ? storedDoppler(a.ask.rec) : undefined);

/** Every check of a launch, one a line, in the order they run. */
const CHECKS: ReadonlyArray<[string, Check]> = [
  ["cwd", async (a) => void (a.cwd = a.ask.input.cwd ? await checkCwd(a.ask.input.cwd) : resume(a)!.rec.cwd)],
  [
    "runner",
    (a) => void ((a.kind = a.ask.input.backend ?? resume(a)?.rec.backend ?? a.d.defaultKind), (a.runner = runnerOf(a.d, a.kind))),
  ],
  // The version is read beside the checks below (a process of its own the first time; cached after).
  ["claude", (a) => void ((a.claude = claudeBinary(a.d.cfg)), (a.version = versionOf(a.claude)))],
  [
    "options the runner honours",
    (a) => checkBackendOptions(a.runner, allRunners(a.d), a.ask.input, dopplerWanted(a) !== undefined),
  ],
  [
    "resume_at",
    async (a) => {
      const r = resume(a);
      if (r?.mode.kind === "resume" && r.mode.at) await checkResumeAt(a.d, r.rec, r.mode.resumeId, r.mode.at);
    },
  ],
  ["budget", budget],
  ["doppler", (a) => void (a.doppler = dopplerFor(a.d.cfg, dopplerWanted(a)))],
  ["launch options", (a) => (resume(a) ? resumeOptions(a) : startOptions(a))],
  ["no widening", (a) => checkWidening(a.d.cfg, resume(a) ? { ...a.opts, agents: a.options.agents } : start(a)!.input)],
  ["sandbox", (a) => void (a.sandbox = sandboxFor(a.d.cfg, sandboxAsked(a), sandboxBlocker(a.runner)))],
  ["permission mode", (a) => checkPermissionMode(a.d.cfg, a.permissionMode, a.sandbox !== undefined)],
  [
    "env",
    (a) => {
      a.env = resume(a)?.env ?? checkEnv(a.d.cfg, start(a)!.input.env);
      if (a.sandbox) checkSandboxEnv(a.env);
    },
  ],
  ["account", account],
  ["mcp_servers", (a) => void (a.mcpServers = checkMcpServers(a.d.cfg, a.ask.input.mcp_servers))],
  [
    "CLI version",
    async (a) =>
      resume(a) || needsVersion(a.runner, a.ask.input)
        ? checkVersionOptions(a.runner, allRunners(a.d), await a.version, a.ask.input)
        : undefined,
  ],
  ["prompt", (a) => void (a.prompt = firstPrompt(a))],
  ["outside the state directory", (a) => assertOutsideState(a.d.cfg.stateDir, [[a.cwd, "cwd"], ...a.addDirs])],
  ["within the roots", (a) => assertInRoots(a.d.cfg, a.ctx, [[a.cwd, "cwd"], ...a.addDirs])],
  [
    "team and worktree arguments",
    (a) => {
      const i = start(a)?.input;
      if (i) startShape(i);
    },
  ],
  ["id and worktree", idAndWorktree],
  ["folder trust", folderTrust],
  ["log_file is still ours", (a) => (resume(a) && !isFork(a) ? sameLogFile(resume(a)!.rec) : undefined)],
  ["hook script", (a) => assertOwnedScript(a.d.scripts.hook)],
  // Last: it creates the file (nothing is left to refuse the call afterwards).
  [
    "log_file",
    async (a) => {
      const f = start(a)?.input.log_file;
      a.logFile = f !== undefined ? await createOwnedFile(f) : undefined;
    },
  ],
];

/** The one admission: runs CHECKS in order and returns what they chose. */
export async function admit(d: Deps, ask: Ask, ctx: CallContext): Promise<Admission> {
  const a = new Admission(d, ctx, ask);
  for (const [, check] of CHECKS) await check(a);
  return a;
}

/** A budget must be enforceable: a resume's with what the session spent; a start's and a fork's (totals at zero) by its models' prices. */
function budget(a: Admission): void {
  const r = resume(a);
  if (r && !isFork(a)) return checkResumeBudget(r.rec, r.input);
  const i = a.ask.input;
  checkBudgetModels(i.max_budget_usd ?? r?.rec.max_budget_usd, [
    i.model ?? r?.rec.model,
    i.fallback_model ?? r?.rec.options.fallback_model,
  ]);
}

/**
 * A start's sandbox is its call's; a resume's the record's, checked again (the operator's hosts and this machine may
 * have changed): under CLAUDE_SESSIONS_SANDBOX=required one started without comes back sandboxed.
 */
function sandboxAsked(a: Admission): StartInput["sandbox"] {
  const r = resume(a);
  return r ? (r.rec.sandbox ?? a.d.cfg.sandbox === "required") : start(a)!.input.sandbox;
}

/**
 * The account: the call's name (or `auto`: the one with the most room), else a resume's record's. Its environment
 * must be there now (a key's variable set); launchRequest reads it again for the child.
 */
async function account(a: Admission): Promise<void> {
  const asked = a.ask.input.account ?? resume(a)?.rec.account;
  if (asked === undefined) return void (a.account = undefined);
  if (a.sandbox)
    throw new SessionError(
      "UNSUPPORTED_OPTION",
      "account does not go with a sandboxed session yet (the sandbox makes its own Claude configuration); nothing was started.",
      { suggestion: "Leave account or sandbox out." },
    );
  const name =
    asked === "auto"
      ? pickAccount(
          readAccountsOf(a.d),
          Object.values((await a.d.store.read()).sessions),
          Date.now(),
          accountLimits(a.d.cfg.stateDir),
        )
      : asked;
  const acct = accountNamed(a.d.cfg.accountsFile, name);
  await prepareAccount(acct, a.d.cfg.dopplerPath);
  accountEnv(acct);
  a.account = name;
}

function readAccountsOf(d: Deps) {
  if (!d.cfg.accountsFile)
    throw new SessionError("INVALID_ARGUMENT", "account auto: this server has no accounts", {
      suggestion: "Leave account out, or have the operator set CLAUDE_SESSIONS_ACCOUNTS.",
    });
  return readAccounts(d.cfg.accountsFile);
}

/** A start's first prompt, checked by its runner's rules. */
function firstPrompt(a: Admission): string | undefined {
  const i = start(a)?.input;
  return i?.prompt !== undefined ? checkPrompt(a.d.cfg, i.prompt, "prompt", false, a.runner.caps) : undefined;
}

/** A start's id (its own or a new one) and its worktree's plan; a resume's the record's id, a fork's its new one. */
async function idAndWorktree(a: Admission): Promise<void> {
  const i = start(a)?.input;
  a.id = i ? (i.session_id ?? newSessionId()) : resume(a)!.forId;
  a.plan = i?.worktree ? await planWorktree(a.d.cfg, a.id, a.cwd, i) : undefined;
}

/** Claude Code trusts the folder, or the runner answers its trust screen (a trust_workspace stored before the operator turned it off is not acted on). */
function folderTrust(a: Admission): Promise<void> {
  const i = start(a)?.input;
  const r = resume(a);
  a.trust = i
    ? Boolean(i.trust_workspace)
    : Boolean(r!.input.trust_workspace ?? (a.d.cfg.allowTrustWorkspace && r!.rec.options.trust_workspace));
  return checkHeadlessTrust(
    a.runner.caps.trustScreen,
    a.plan ? a.plan.cwd : a.cwd,
    childEnv(process.env, a.env),
    a.trust,
    a.plan?.top,
  );
}

/** A start's launch options: the effective permission mode, its add_dirs checked. */
async function startOptions(a: Admission): Promise<void> {
  const i = start(a)!.input;
  a.permissionMode = effectiveMode(a.d.cfg, i.permission_mode);
  for (const dir of i.add_dirs ?? []) a.addDirs.push([await checkCwd(dir, "add_dirs"), "add_dirs entry"]);
}

/** A resume's: the record's options with the call's changes (given ones replace the stored ones) and the effective mode. */
async function resumeOptions(a: Admission): Promise<void> {
  const { rec, input } = resume(a)!;
  const stored = optionsFor(a.runner, rec.options, input);
  for (const k of CHANGEABLE) {
    if (input[k] === undefined) continue;
    if (k === "add_dirs") stored.add_dirs = await Promise.all((input.add_dirs ?? []).map((x) => checkCwd(x, "add_dirs")));
    else if (k === "allowed_tools" || k === "disallowed_tools") stored[k] = input[k];
    else if (k === "permission_mode") stored.permission_mode = input.permission_mode;
    else stored[k] = input[k];
  }
  // A resumed session keeps its recorded mode (one started by an older server without one gets the default).
  a.options = withMode(a.d.cfg, stored);
  a.opts = pickClaudeOptions(a.options);
  a.permissionMode = a.options.permission_mode;
  a.addDirs = (a.opts.add_dirs ?? []).map((x) => [x, "add_dirs entry"]);
}

/** Arguments of a start that only make sense together. */
function startShape(i: StartInput): void {
  if (i.team_lead && !i.team_name)
    throw new SessionError("INVALID_ARGUMENT", "team_lead needs a team_name.", {
      suggestion: "Pass team_name too: the lead leads that team.",
    });
  if (!i.worktree && (i.copy_files || i.setup_command)) {
    throw new SessionError("INVALID_ARGUMENT", "copy_files and setup_command go with worktree.", {
      suggestion: "Pass worktree: true (or {branch, base}).",
    });
  }
}

/** The session's log_file is still the file this server created for it. */
async function sameLogFile(rec: SessionRecord): Promise<void> {
  if (rec.log_file && rec.log_file_id && !(await isSameFile(rec.log_file, rec.log_file_id))) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `the session's log_file ${JSON.stringify(rec.log_file)} is no longer the file this server created for it; nothing was started.`,
      {
        suggestion: "Restore the file, or start a new session with a new log_file.",
      },
    );
  }
}

/** start_session's admission, in the form its caller records (launch.ts). */
export async function admitStart(d: Deps, input: StartInput, ctx: CallContext) {
  // The caller's cwd under the name start uses for it (the session's own cwd may be a worktree's).
  const { cwd: callerCwd, ...admitted } = await admit(d, { how: "start", input }, ctx);
  return { callerCwd, ...admitted };
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
  account: string | undefined;
}

/** resume_session's and a fork's admission (the record's values where the call gives none), in the form resume.ts records. */
export async function admitResume(
  d: Deps,
  rec: SessionRecord,
  input: ResumeInput,
  env: Record<string, string>,
  mode: LaunchMode,
  ctx: CallContext,
  forId = rec.session_id,
): Promise<ResumePlan> {
  const a = await admit(d, { how: "resume", input, rec, env, mode, forId }, ctx);
  const { cwd, kind, runner, options, claude, opts, trust, doppler, sandbox, account } = a;
  return {
    cwd,
    kind,
    runner,
    options,
    claude,
    opts,
    mode,
    trust,
    doppler,
    version: await a.version,
    sandbox,
    account,
    transient: transientOptions({ ...input, mcp_servers: a.mcpServers }),
  };
}

/** resume_at names a message of the conversation being resumed (get_conversation lists their uuids). */
async function checkResumeAt(d: Deps, rec: SessionRecord, claudeId: string, at: string): Promise<void> {
  const path =
    d.registry.followed(rec.session_id)?.fold.transcript_path ??
    transcriptPath(configDirFor(d.cfg.accountsFile, d.cfg.claudeConfigDir, rec.account), rec.cwd, claudeId);
  if (await hasEntry(path, at)) return;
  throw new SessionError(
    "INVALID_ARGUMENT",
    `resume_at ${at} is not a message of conversation ${claudeId}; nothing was started.`,
    {
      suggestion: `get_conversation {claude_session_id: "${claudeId}"} lists each message's uuid.`,
    },
  );
}
