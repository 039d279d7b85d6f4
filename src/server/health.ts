/**
 * health_check and `claude-sessions doctor`: one list of checks, each ok, warn (works; read the detail), degraded or down, and an overall status
 * (down when no session can start, degraded when something is missing or unhealthy). Every check runs a program
 * by argv with a short timeout, looks at a file or connects to this server's own member socket; none changes a session.
 */
import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { access, lstat, stat, unlink, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { freemem, totalmem } from "node:os";
import { dirname, join } from "node:path";
import type { HealthCheck, HealthOutput } from "../api/index.js";
import { RUNNER_KINDS } from "../runners/registry.js";
import type { Runner } from "../runners/runner.js";
import { createLogger } from "../util/log.js";
import { findClaude, findOnPath } from "../claude/discover.js";
import { cliVersion, TESTED_CLI, versionWarning } from "../claude/versions.js";
import { accountLimits, accountRooms, readAccounts, windowsText, type AccountUser } from "../claude/accounts.js";
import { withWindows } from "../claude/account-windows.js";
import type { Config } from "../config.js";
import { sandboxDeps } from "../sandbox/deps.js";
import { isLive } from "../core/status.js";
import type { Store } from "../store/store.js";
import type { SessionRecord } from "../store/schema.js";

export interface HealthInput {
  cfg: Config;
  version: string;
  /** The running server's store (doctor has none and reads state.json through a fresh one). */
  store?: Store;
  startedAt?: number;
  /** Time-limit deadlines armed in this server (one timer each). */
  armedLimits?: number;
  /**
   * The server's runners: each says whether its sessions can start here (one check each). A kind not given (doctor has
   * none; a kind the server found unavailable) is made from the registry and asked the same way.
   */
  runners?: Runner[];
  /** The transcript index's state, when this server has one. */
  index?: () => { indexing: boolean; complete_at: string | null };
  /** Checks of the transport serving this server (the HTTP server's MCP sessions). */
  extra?: HealthCheck[];
  /** The path of this server's team members' socket (member/socket.ts), when it has tried to listen on one. */
  memberSocket?: string;
}

/** A lock directory not refreshed for this long means a stale or stuck writer. */
const STUCK_LOCK_MS = 30_000;

/** The CLI versions live sessions run (recorded at their start or resume): warn when one is outside the tested range. */
function sessionVersions(
  live: SessionRecord[],
  add: (name: string, status: HealthCheck["status"], detail: string) => void,
): void {
  if (!live.length) return;
  const by = new Map<string, string[]>();
  for (const r of live) by.set(r.claude_version ?? "unknown", [...(by.get(r.claude_version ?? "unknown") ?? []), r.session_id]);
  const parts = [...by].map(([v, ids]) => `${v}: ${ids.length > 5 ? `${ids.slice(0, 5).join(", ")} …` : ids.join(", ")}`);
  const outside = [...by.keys()].filter((v) => v !== "unknown" && versionWarning(v));
  add(
    "session_cli_versions",
    outside.length ? "warn" : "ok",
    `${parts.join("; ")}${outside.length ? ` (outside the tested range: ${outside.join(", ")})` : ""}`,
  );
}

/** How long a connection to the member socket may take before it counts as not listening. */
const SOCKET_PROBE_MS = 1000;

/** Whether a Unix socket accepts a connection now (what a member's server does first), closed at once. */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), SOCKET_PROBE_MS);
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
  });
}

/**
 * The team members' socket: listening and 0600 is ok; not listening is degraded while a live team session of the
 * state directory needs it (its member tools cannot reach this server), else a warning.
 */
async function memberSocket(
  path: string,
  teamLive: string[] | undefined,
  add: (name: string, status: HealthCheck["status"], detail: string) => void,
): Promise<boolean> {
  const listening = await accepts(path);
  const mode = listening ? ((await lstat(path).catch(() => undefined))?.mode ?? 0) & 0o777 : 0;
  if (listening && mode === 0o600) add("member_socket", "ok", `${path} is listening (0600)`);
  else if (listening) add("member_socket", "degraded", `${path} is listening with mode 0${mode.toString(8)}, not 0600`);
  else {
    const who = teamLive?.length
      ? `; live team sessions ${teamLive.length > 5 ? `${teamLive.slice(0, 5).join(", ")} …` : teamLive.join(", ")} may not reach this server`
      : "";
    add(
      "member_socket",
      teamLive?.length ? "degraded" : "warn",
      `${path} is not listening: team members' tools cannot reach this server (restart it to listen again)${who}`,
    );
  }
  return listening;
}

/** The nearest existing ancestor of `dir` is a writable directory. */
async function creatable(dir: string): Promise<boolean> {
  for (let d = dirname(dir); ; d = dirname(d)) {
    const ok = await access(d, constants.W_OK | constants.X_OK).then(
      () => true,
      (e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : false),
    );
    if (ok !== undefined) return ok;
    if (d === dirname(d)) return false;
  }
}

/** The operator's accounts (issue 33): each one's sessions and limit; warn when every one is limited, degraded when the file does not read. */
function accountsCheck(
  file: string,
  stateDir: string,
  users: AccountUser[],
  add: (name: string, status: HealthCheck["status"], detail: string) => void,
): void {
  try {
    const rooms = withWindows(stateDir, accountRooms(readAccounts(file), users, Date.now(), accountLimits(stateDir)));
    const detail = rooms
      .map(
        (r) =>
          `${r.name}: ${r.sessions.length} session(s), ${r.limited_until ? `limited until ${r.limited_until}` : "room"}` +
          (r.windows ? `, ${windowsText(r.windows)}` : ""),
      )
      .join("; ");
    add(
      "accounts",
      rooms.length && rooms.every((r) => r.limited_until) ? "warn" : "ok",
      detail || "the accounts file names no account",
    );
  } catch (e) {
    add("accounts", "degraded", e instanceof Error ? e.message : String(e));
  }
}

export async function healthChecks(h: HealthInput): Promise<HealthOutput> {
  const { cfg } = h;
  const checks: HealthCheck[] = [];
  const add = (name: string, status: HealthCheck["status"], detail: string) => checks.push({ name, status, detail });

  // Each runner kind in the registry's order; the ones this server does not hold are made (nothing starts) to be asked.
  const setup = { cfg, log: createLogger({ level: "error" }), scripts: { hook: "", launch: "", capture: "", permission: "" } };
  const runners = RUNNER_KINDS.map((k) => h.runners?.find((r) => r.kind === k.kind) ?? k.make(setup));
  const said = await Promise.all(runners.map(async (r) => ({ kind: r.kind, ...(await r.health()) })));
  // Down only when no runner can start a session; one missing while another works is degraded.
  for (const r of said) {
    const others = said.filter((o) => o !== r && o.ok).map((o) => o.kind);
    const status = r.ok ? "ok" : others.length ? "degraded" : "down";
    add(
      r.check,
      status,
      r.ok
        ? r.detail
        : `${r.detail}${others.length ? ` (${others.join(" and ")} sessions still work)` : " and so is every other backend"}`,
    );
  }

  const claude = findClaude(cfg.claudePath);
  const cv = claude.path ? await cliVersion(claude.path) : undefined;
  if (!claude.path) add("claude", "down", `not found; looked in ${claude.searched.length} places (set CLAUDE_PATH)`);
  else add("claude", cv ? "ok" : "degraded", cv ? `${claude.path} (${cv})` : `${claude.path} did not report a version`);
  if (cv) {
    const w = versionWarning(cv);
    add(
      "claude_version",
      w ? "warn" : "ok",
      w ?? `${cv} is in the tested range (${TESTED_CLI.oldest}–${TESTED_CLI.newest}, pinned ${TESTED_CLI.pinned})`,
    );
  }

  const flock = findOnPath("flock", undefined);
  add("flock", flock.path ? "ok" : "down", flock.path ?? "not found (the event hook needs it; util-linux / brew install flock)");

  const sb = sandboxDeps();
  const sbMode = `CLAUDE_SESSIONS_SANDBOX=${cfg.sandbox}`;
  if (sb.ok)
    add(
      "sandbox",
      "ok",
      `bubblewrap, socat and ripgrep found, namespaces work (${sbMode}; hosts: ${cfg.sandboxHosts.join(", ") || "the API's only"})`,
    );
  else
    add(
      "sandbox",
      cfg.sandbox === "required" ? "down" : cfg.sandbox === "on" ? "degraded" : "warn",
      `${sb.missing.join("; ")} (${sbMode}: sandboxed starts fail with SANDBOX_UNAVAILABLE; Debian: apt-get install bubblewrap socat ripgrep)`,
    );
  if (cfg.dopplerPath || cfg.dopplerProject || cfg.dopplerConfig) {
    const doppler = findOnPath("doppler", cfg.dopplerPath);
    add(
      "doppler",
      doppler.path ? "ok" : "degraded",
      doppler.path ?? "configured but not found (sessions with doppler fail with DOPPLER_ERROR)",
    );
  }

  const probe = join(cfg.stateDir, `.health-${randomUUID()}`);
  try {
    await writeFile(probe, "", { mode: 0o600, flag: "wx" });
    await unlink(probe);
    add("state_dir", "ok", `${cfg.stateDir} is writable`);
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT" && (await creatable(cfg.stateDir));
    if (missing) add("state_dir", "ok", `${cfg.stateDir} does not exist yet; it will be created (its parent is writable)`);
    else add("state_dir", "down", `${cfg.stateDir} is not writable: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }

  const lock = await stat(join(cfg.stateDir, "state.json.lock")).catch(() => undefined);
  const lockAge = lock ? Date.now() - lock.mtimeMs : 0;
  // The holder refreshes the lock directory's mtime while it holds it: an old one is a stale or stuck lock.
  add(
    "store_lock",
    lock && lockAge > STUCK_LOCK_MS ? "degraded" : "ok",
    lock ? `state.json.lock held, refreshed ${Math.round(lockAge)} ms ago` : "not held",
  );

  let teamLive: string[] | undefined;
  if (h.store) {
    try {
      const st = await h.store.read();
      teamLive = Object.values(st.sessions)
        .filter((r) => isLive(r.status) && r.team_name)
        .map((r) => r.session_id);
      const live = Object.values(st.sessions).filter((r) => isLive(r.status)).length;
      add(
        "sessions",
        live >= cfg.maxSessions ? "degraded" : "ok",
        // MAX_LIVE is said too: a coordinator's `auto` and wake_anywhere read this machine's room from it (nodes/room.ts).
        `${live} live of ${cfg.maxSessions} (MAX_CONCURRENT_SESSIONS)${cfg.maxLive > 0 ? `; CLAUDE_SESSIONS_MAX_LIVE ${cfg.maxLive}` : ""}`,
      );
      sessionVersions(
        Object.values(st.sessions).filter((r) => isLive(r.status)),
        add,
      );
      if (cfg.accountsFile) accountsCheck(cfg.accountsFile, cfg.stateDir, Object.values(st.sessions), add);
      if (h.index) {
        // The conversation index answers while it builds (saying so); a build is not a fault.
        const ix = h.index();
        add(
          "history_index",
          "ok",
          ix.indexing
            ? `building (searches answer from what is indexed so far)${ix.complete_at ? `; last complete ${ix.complete_at}` : ""}`
            : `up to date as of ${ix.complete_at}`,
        );
      }
    } catch (e) {
      add("sessions", "degraded", `state.json could not be read: ${String(e).slice(0, 200)}`);
    }
  }
  const socket = h.memberSocket
    ? { path: h.memberSocket, listening: await memberSocket(h.memberSocket, teamLive, add) }
    : undefined;
  if (h.armedLimits !== undefined) {
    const on = [
      ["idle TTL", cfg.idleTtlMs],
      ["busy limit", cfg.busyMaxMs],
      ["retention", cfg.retainDeadMs],
    ].map(([n, v]) => `${n} ${v ? `${v} ms` : "off"}`);
    add("time_limits", "ok", `${on.join(", ")}; ${h.armedLimits} deadline(s) armed`);
  }
  // A coordinator's node "auto" compares free slots, then this.
  add("memory", "ok", `${Math.round(freemem() / 1048576)} MiB available of ${Math.round(totalmem() / 1048576)} MiB`);
  checks.push(...(h.extra ?? []));
  if (h.startedAt !== undefined) add("uptime", "ok", `${Math.round((Date.now() - h.startedAt) / 1000)} s`);
  add("version", "ok", `claude-sessions ${h.version}, node ${process.versions.node}`);

  const status = checks.some((c) => c.status === "down")
    ? "down"
    : checks.some((c) => c.status === "degraded")
      ? "degraded"
      : "ok";
  return { status, checks, ...(socket ? { member_socket: socket } : {}) };
}
