/**
 * `claude-sessions nodes upgrade [NAME] [--wait]`: brings nodes that `nodes add` made to this claude-sessions'
 * version. Per node: its sessions are listed through a link of this command's own; a busy one (in a turn, waiting
 * for a permission answer, blocked, starting) refuses the upgrade with its id and nothing changes (or, with --wait,
 * is waited for); idle ones are hibernated (kill_session {hibernate: true}: their conversations are kept); the
 * package is installed (add.ts: SHA-256 checked on the host) and `current` switched to it; the node's running
 * claude-sessions servers are ended, so every coordinator's link to it reconnects — to the new version — within
 * seconds; the link is checked to answer at the new version. Then the sessions it hibernated are woken by the new
 * version (resume_session: the same session and conversation), so they are live again without a prompt: those that
 * outlive their server (tmux). A pty or headless one would end with this command's link, so it wakes on its next
 * prompt, as does one whose wake fails (it stays hibernated; the command says so and goes on).
 */
import { spawnSync } from "node:child_process";
import { SessionError } from "../../core/errors.js";
import { createLogger } from "../../util/log.js";
import { safeText } from "../../util/terminal-text.js";
import { loadNodes, type NodeConfig } from "../config.js";
import { NodeLink } from "../link.js";
import { installOn } from "./add.js";
import { packSelf, type Packed } from "./pack.js";
import { parseNodeExec, RESTART_SCRIPT, sshArgv } from "./remote.js";

const BUSY = new Set(["busy", "waiting_for_permission", "blocked", "starting"]);
const IDLE = new Set(["idle", "ready"]);
const ANSWER_MS = 30_000;
const WAIT_MS = 30 * 60_000;

export interface UpgradeOptions {
  name?: string;
  wait: boolean;
  version: string;
  nodesFile: string | undefined;
  stateDir: string;
  say(line: string): void;
}

interface Row {
  session_id: string;
  status: string;
  survives_restart?: boolean;
}

/** A session's start (its process and Claude's SessionStart), on a node under load. */
const WAKE_MS = 120_000;
/** Wakes tried per session, 3 s, then 6 s… apart. */
const WAKE_TRIES = 4;

async function openLink(cfg: NodeConfig, version: string): Promise<NodeLink> {
  const link = new NodeLink(cfg, createLogger({ level: "error" }), {}, undefined, version);
  link.start();
  await link.ready();
  return link;
}

async function sessionsOf(link: NodeLink): Promise<Row[]> {
  const res = await link.call("list_sessions", { status_filter: "active" }, {}, ANSWER_MS);
  return ((res.sessions ?? []) as Row[]).filter((r) => typeof r.session_id === "string");
}

/** Upgrades one node; returns the ids it hibernated. */
async function upgradeOne(cfg: NodeConfig, o: UpgradeOptions, pack: () => Promise<Packed>): Promise<string[]> {
  const ssh = cfg.exec ? parseNodeExec(cfg.exec) : undefined;
  if (!ssh)
    throw new SessionError(
      "INVALID_ARGUMENT",
      `node ${cfg.name} was not set up by nodes add (its exec is not ssh … node ${".local/lib/claude-sessions/current/dist/bin.js"}); it is not upgraded`,
      { suggestion: `Upgrade it by hand, or run claude-sessions nodes add ${cfg.name} user@host --replace.` },
    );
  let link = await openLink(cfg, o.version);
  const hibernated: string[] = [];
  const lasting = new Set<string>();
  try {
    if (link.version === o.version) {
      o.say(`${cfg.name}: already at claude-sessions ${o.version}`);
      return [];
    }
    o.say(`${cfg.name}: claude-sessions ${link.version ?? "?"} → ${o.version}`);
    let rows = await sessionsOf(link);
    const busy = rows.filter((r) => BUSY.has(r.status));
    if (busy.length && !o.wait) {
      throw new SessionError(
        "SESSION_BUSY",
        `node ${cfg.name} has sessions in a turn: ${busy.map((r) => `${r.session_id} (${r.status})`).join(", ")}; nothing was changed`,
        {
          suggestion:
            "Run nodes upgrade again once their turns end, or pass --wait to wait for them (a session waiting for a permission " +
            "answer or blocked waits for a person).",
          details: { node: cfg.name, session_ids: busy.map((r) => r.session_id) },
        },
      );
    }
    for (const r of busy) {
      o.say(`${cfg.name}: waiting for ${r.session_id} (${r.status})`);
      await link.call("wait_for_completion", { session_id: r.session_id, timeout_ms: WAIT_MS }, {}, WAIT_MS + 60_000);
    }
    rows = await sessionsOf(link);
    for (const r of rows.filter((x) => IDLE.has(x.status))) {
      await link.call("kill_session", { session_id: r.session_id, hibernate: true }, {}, ANSWER_MS);
      hibernated.push(r.session_id);
      if (r.survives_restart) lasting.add(r.session_id);
      o.say(`${cfg.name}: hibernated ${r.session_id}`);
    }
    const still = (await sessionsOf(link)).filter((r) => r.status !== "hibernated" && r.status !== "dead");
    if (still.length) {
      throw new SessionError(
        "SESSION_BUSY",
        `node ${cfg.name}: ${still.map((r) => `${r.session_id} (${r.status})`).join(", ")} became busy meanwhile; the version ` +
          `was not changed (${hibernated.length} hibernated, their next prompt wakes them)`,
        {
          suggestion: "Run nodes upgrade again.",
          details: { node: cfg.name, session_ids: still.map((r) => r.session_id) },
        },
      );
    }
    await link.close();
    const p = await pack();
    await installOn(ssh.target, ssh.opts, { file: p.path, sha: p.sha256, version: p.version }, (l) => o.say(`${cfg.name}: ${l}`));
    // Every server of the old version on the node ends: each coordinator's link reconnects to the new one.
    const argv = sshArgv(ssh.target, ssh.opts, RESTART_SCRIPT);
    spawnSync(argv[0]!, argv.slice(1), { stdio: "ignore", timeout: ANSWER_MS });
    link = await openLink(cfg, o.version);
    if (link.version !== o.version)
      throw new SessionError(
        "PROCESS_ERROR",
        `node ${cfg.name} answers at claude-sessions ${link.version ?? "?"} after the upgrade, not ${o.version}`,
        { suggestion: "Check ~/.local/lib/claude-sessions/current on the node." },
      );
    o.say(`${cfg.name}: answers at claude-sessions ${o.version}`);
    await wakeAgain(link, cfg.name, hibernated, lasting, o);
    return hibernated;
  } finally {
    await link.close().catch(() => {});
  }
}

/** The sessions the upgrade hibernated, woken by the new version; one it cannot wake stays hibernated (said). */
async function wakeAgain(link: NodeLink, node: string, ids: string[], lasting: Set<string>, o: UpgradeOptions): Promise<void> {
  for (const id of ids) {
    if (!lasting.has(id)) {
      o.say(`${node}: ${id} stays hibernated (its process would end with this command's link); it wakes on its next prompt`);
      continue;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await link.call("resume_session", { session_id: id }, {}, WAKE_MS);
        o.say(`${node}: woke ${id} (${typeof r.status === "string" && /^[a-z_]{1,32}$/.test(r.status) ? r.status : "?"})`);
        break;
      } catch (e) {
        const why = e instanceof SessionError ? `${e.code}: ${e.message}` : String(e);
        // Running already (a prompt woke it): nothing to do. A start that failed is tried again a little later: the
        // coordinators' links reconnect to the node now, and a node server that starts reconciles the sessions on
        // the node, which can end a start under way on another server (seen: "exited during start-up").
        const running = e instanceof SessionError && (e.code === "INVALID_ARGUMENT" || e.code === "SESSION_BUSY");
        if (running || attempt >= WAKE_TRIES) {
          o.say(`${node}: ${id} not woken here (${safeText(why.slice(0, 300))}); a hibernated one wakes on its next prompt`);
          break;
        }
        o.say(`${node}: ${id} did not wake (${safeText(why.split("\n")[0]!.slice(0, 200))}); trying again`);
        await new Promise((r) => setTimeout(r, 3000 * attempt));
      }
    }
  }
}

export async function upgradeNodes(o: UpgradeOptions): Promise<void> {
  const nodes = await loadNodes(o.nodesFile, o.stateDir);
  const chosen = o.name === undefined ? nodes : nodes.filter((n) => n.name === o.name);
  if (o.name !== undefined && !chosen.length)
    throw new SessionError("INVALID_ARGUMENT", `no node ${JSON.stringify(o.name.slice(0, 64))} in nodes.json`, {
      suggestion: "claude-sessions nodes lists them.",
    });
  if (!chosen.length)
    throw new SessionError("INVALID_ARGUMENT", "no nodes configured", {
      suggestion: "Add one with claude-sessions nodes add NAME user@host.",
    });
  let packed: Packed | undefined;
  const pack = async () => {
    if (!packed) {
      o.say("packing this claude-sessions with its dependencies");
      packed = await packSelf();
    }
    return packed;
  };
  try {
    for (const n of chosen) await upgradeOne(n, o, pack);
  } finally {
    (packed as Packed | undefined)?.dispose();
  }
}
