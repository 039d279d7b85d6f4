/**
 * move_session across machines (issue 36): a two-phase move whose every step is one transfer_session call on a
 * machine (sessions/move/transfer.ts), journaled in <state>/moves/<move id>.json so a coordinator killed at any
 * point leaves the session on exactly one machine:
 *   export (source) → import (target: a copy, hibernated, marked incoming, hidden) → release (source: removed, only if
 *   unchanged since export) → commit (target: the mark goes) → the journal goes.
 * An unfinished move is resolved from what the machines have, not from how far the journal got: while the source
 * still has the session, the target's incoming copy is aborted; once the source has released it, the copy is committed.
 * That runs when a step fails and, for journals left by a killed coordinator, when the coordinator starts (and again
 * every few seconds while a machine it needs does not answer).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  moveId as moveIdSchema,
  transferOutput,
  type MoveOutput,
  type TransferInput,
  type TransferOutput,
} from "../api/index.js";
import type { CallContext } from "../core/context.js";
import { SessionError } from "../core/errors.js";
import type { SessionService } from "../sessions/service.js";
import type { Coordinator } from "./coordinator.js";
import { NODE_ANSWER_MS } from "./link.js";
import { mostRoom, roomsOf } from "./room.js";
import { LOCAL } from "./router.js";
import { isAlive } from "../util/proc/process.js";

export interface MoveJournal {
  move_id: string;
  session_id: string;
  from: string;
  to: string;
  started_at: string;
  /** The coordinator process that runs it: another one (a CLI move beside the server) leaves it alone while it lives. */
  pid: number;
}

/** A step's bound on a node: a transcript of tens of MiB crosses the link. */
const STEP_MS = 120_000;

const dirOf = (svc: SessionService) => join(svc.deps.cfg.stateDir, "moves");

async function writeJournal(svc: SessionService, j: MoveJournal): Promise<void> {
  const dir = dirOf(svc);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${j.move_id}.tmp`);
  await writeFile(tmp, JSON.stringify(j), { mode: 0o600 });
  await rename(tmp, join(dir, `${j.move_id}.json`));
}

async function dropJournal(svc: SessionService, id: string): Promise<void> {
  await rm(join(dirOf(svc), `${id}.json`), { force: true });
}

/** The journals of unfinished moves (a file that is not one is left alone and logged). */
export async function journals(svc: SessionService): Promise<MoveJournal[]> {
  const names = await readdir(dirOf(svc)).catch(() => [] as string[]);
  const out: MoveJournal[] = [];
  for (const n of names) {
    if (!n.endsWith(".json")) continue;
    try {
      const j = JSON.parse(await readFile(join(dirOf(svc), n), "utf8")) as MoveJournal;
      if (
        moveIdSchema.safeParse(j.move_id).success &&
        typeof j.session_id === "string" &&
        typeof j.from === "string" &&
        typeof j.to === "string"
      )
        out.push({ ...j, pid: typeof j.pid === "number" ? j.pid : 0 });
    } catch (e) {
      svc.deps.log.warn(`move journal ${n} unreadable: ${String(e)}`);
    }
  }
  return out;
}

/** One step on a machine: this one's service, or transfer_session on the node. */
async function step(
  c: Coordinator,
  svc: SessionService,
  node: string,
  args: TransferInput,
  ctx: CallContext = {},
  limitMs = STEP_MS,
): Promise<TransferOutput> {
  if (node === LOCAL) return svc.transfer(args);
  // Whatever the step did there (a record imported, released or committed) folds no event, so the node pushes no
  // change: its rows this coordinator holds are made stale here, and the next listing reads them again.
  const raw = await c
    .linkOf(node)
    .call("transfer_session", args, ctx, limitMs)
    .finally(() => c.router.stale(node));
  const parsed = transferOutput.safeParse(raw);
  if (!parsed.success) throw new SessionError("INTERNAL", `node ${node}: its transfer_session answer is not valid.`);
  return parsed.data;
}

/** Where each side stands, then the one action that leaves the session on exactly one machine. */
export async function resolveMove(
  c: Coordinator,
  svc: SessionService,
  j: MoveJournal,
): Promise<"aborted" | "committed" | "none"> {
  const base = { session_id: j.session_id, move_id: j.move_id };
  const target = await step(c, svc, j.to, { op: "state", ...base }, {}, NODE_ANSWER_MS);
  let outcome: "aborted" | "committed" | "none" = "none";
  if (target.incoming === j.move_id) {
    const source = await step(c, svc, j.from, { op: "state", ...base }, {}, NODE_ANSWER_MS);
    if (source.present) {
      await step(c, svc, j.to, { op: "abort", ...base });
      outcome = "aborted";
    } else {
      await step(c, svc, j.to, { op: "commit", ...base });
      outcome = "committed";
    }
  } else if (!target.present) {
    // No copy (yet): the move is given up there, so an import still on its way (sent by a coordinator killed after
    // sending it) is refused when it arrives. The source keeps the session.
    await step(c, svc, j.to, { op: "abort", ...base });
    outcome = "aborted";
  }
  // Else the target has a committed copy (the source released it before the commit): the session is on one machine.
  await dropJournal(svc, j.move_id);
  c.router.forget(j.session_id);
  svc.deps.log.info(`move ${j.move_id} of ${j.session_id} (${j.from} → ${j.to}) resolved: ${outcome}`);
  return outcome;
}

/** Resolves every journal left by an earlier coordinator; one whose machines do not answer is tried again later. */
export async function recoverMoves(c: Coordinator, svc: SessionService, retryMs = 3000): Promise<void> {
  // Only moves whose coordinator is gone: one under way in another live process (the server, a CLI move) is its own.
  const left = (await journals(svc)).filter((j) => j.pid === process.pid || !(j.pid > 0 && isAlive(j.pid)));
  const failed: MoveJournal[] = [];
  for (const j of left) {
    await resolveMove(c, svc, j).catch((e: unknown) => {
      svc.deps.log.warn(`move ${j.move_id} of ${j.session_id}: not resolved yet (${String(e)}); trying again`);
      failed.push(j);
    });
  }
  if (failed.length && !c.closed) {
    const t = setTimeout(() => void recoverMoves(c, svc, retryMs), retryMs);
    t.unref();
  }
}

/**
 * node "auto": the other machine with the most room (room.ts: live under its MAX_LIVE and its slots, then the fewest
 * live); none: LIMIT_REACHED, nothing moved.
 */
async function autoDest(c: Coordinator, svc: SessionService, id: string, from: string): Promise<string> {
  const best = mostRoom(await roomsOf(c, svc), from);
  if (best) return best.name;
  throw new SessionError("LIMIT_REACHED", `no other machine has room for session ${id} now; nothing was moved.`, {
    suggestion:
      "Every other reachable machine is at its CLAUDE_SESSIONS_MAX_LIVE (or MAX_CONCURRENT_SESSIONS): name a node to move it " +
      "there anyway (it hibernates that machine's least recently used idle session when woken), or try again later.",
  });
}

/** move_session: the session carried from its machine to `node`. */
export async function moveSession(
  c: Coordinator,
  svc: SessionService,
  args: { session_id: string; node: string },
  ctx: CallContext,
): Promise<MoveOutput> {
  const id = args.session_id;
  const to = args.node === "auto" ? undefined : args.node;
  if (to !== undefined && to !== LOCAL) c.linkOf(to); // an unknown node: INVALID_ARGUMENT naming the nodes
  const from = await c.targetOf(svc, { session_id: id });
  if (from === LOCAL) {
    const r = await svc.deps.store.get(id);
    if (!r || r.incoming)
      throw new SessionError("SESSION_NOT_FOUND", `there is no session ${id} on any machine.`, {
        suggestion: "list_sessions shows every machine's sessions.",
      });
  }
  const dest = to ?? (await autoDest(c, svc, id, from));
  if (dest === from) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `session ${id} is already on ${from === LOCAL ? "this machine" : `node ${from}`}.`,
      { suggestion: "Name another node." },
    );
  }
  if ((await journals(svc)).some((j) => j.session_id === id)) {
    throw new SessionError("SESSION_BUSY", `session ${id} is being moved already.`, {
      suggestion: "Wait for that move to end (list_sessions shows where it is).",
    });
  }
  const j: MoveJournal = {
    move_id: `mv-${randomBytes(8).toString("hex")}`,
    session_id: id,
    from,
    to: dest,
    started_at: new Date().toISOString(),
    pid: process.pid,
  };
  const base = { session_id: id, move_id: j.move_id };
  // Export first (it hibernates an idle session; a refusal changes nothing): no journal needed yet.
  const ex = await step(c, svc, from, { op: "export", ...base }, ctx);
  const bundle = ex.bundle;
  if (!bundle) throw new SessionError("INTERNAL", `${from}: export returned no session.`);
  await writeJournal(svc, j);
  try {
    await step(c, svc, dest, { op: "import", ...base, bundle }, ctx);
    await step(c, svc, from, { op: "release", ...base, seq: bundle.seq }, ctx);
    await step(c, svc, dest, { op: "commit", ...base }, ctx);
  } catch (e) {
    // Whatever step failed, the session ends on one machine: the source's while it has it.
    await resolveMove(c, svc, j).catch((r: unknown) =>
      svc.deps.log.warn(`move ${j.move_id}: resolving after a failed step failed (${String(r)}); the journal is kept`),
    );
    throw e;
  }
  await dropJournal(svc, j.move_id);
  c.router.forget(id);
  if (dest !== LOCAL) c.router.learn(id, dest);
  return {
    session_id: id,
    move_id: j.move_id,
    from,
    node: dest,
    status: "hibernated",
    transcript_bytes: Buffer.byteLength(bundle.transcript),
  };
}
