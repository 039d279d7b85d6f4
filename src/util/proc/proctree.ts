/**
 * A session's whole process tree, for kill: everything descended from its leader pid (found through
 * /proc's parent links, so children that moved to another session or process group with setsid still
 * count) plus every process whose environment carries the session's tag (`CLAUDE_SESSIONS_ID=<id>`,
 * which the session's environment sets), which finds daemons whose parent exited and who were
 * re-parented to init. Collected before any signal is sent (a dying parent orphans its children), each
 * with its start time so a pid reused meanwhile is never signalled. Linux only (/proc); elsewhere the
 * tree is just the leader. Never this process or its ancestors.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface Proc {
  pid: number;
  ppid: number;
  /** Start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
  start: string;
}

function readStat(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (f[0] === "Z" || f[0] === "X") return undefined; // a zombie is already dead; its parent reaps it
    return { pid, ppid: Number(f[1]), start: f[19] ?? "" };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .map(Number);
  } catch {
    return [];
  }
}

function hasTag(pid: number, tag: string): boolean {
  try {
    const env = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
    return env.includes(`\0${tag}\0`);
  } catch {
    return false; // not ours to read, or gone
  }
}

/** This process and its ancestors: never part of a session's tree. */
function protectedPids(): Set<number> {
  const out = new Set<number>([process.pid]);
  for (let p = readStat(process.pid); p && p.ppid > 1 && !out.has(p.ppid); p = readStat(p.ppid)) out.add(p.ppid);
  out.add(1);
  return out;
}

/** The leader and all its descendants, plus the processes tagged with `tag` ("NAME=value") and their descendants. */
export function sessionTree(leader: number | undefined, tag?: string): Proc[] {
  const procs = new Map<number, Proc>();
  for (const pid of allPids()) {
    const p = readStat(pid);
    if (p) procs.set(pid, p);
  }
  const children = new Map<number, number[]>();
  for (const p of procs.values()) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const roots: number[] = [];
  if (leader !== undefined && procs.has(leader)) roots.push(leader);
  if (tag) for (const pid of procs.keys()) if (hasTag(pid, tag)) roots.push(pid);
  const skip = protectedPids();
  const seen = new Map<number, Proc>();
  const stack = [...roots];
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid) || skip.has(pid)) continue;
    const p = procs.get(pid);
    if (!p) continue;
    seen.set(pid, p);
    stack.push(...(children.get(pid) ?? []));
  }
  return [...seen.values()];
}

/** Whether the process still runs and is the one collected (not a reused pid, not a zombie). */
export function stillRunning(p: Proc): boolean {
  const now = readStat(p.pid);
  return now !== undefined && now.start === p.start;
}

/** Sends `sig` to each collected process that is still the same process. */
export function signalTree(procs: readonly Proc[], sig: NodeJS.Signals): void {
  for (const p of procs) {
    if (!stillRunning(p)) continue;
    try {
      process.kill(p.pid, sig);
    } catch {
      /* gone */
    }
  }
}

/** The collected processes still running. */
export function survivors(procs: readonly Proc[]): Proc[] {
  return procs.filter(stillRunning);
}

async function waitGone(procs: readonly Proc[], ms: number): Promise<void> {
  const end = performance.now() + ms;
  while (survivors(procs).length && performance.now() < end) await new Promise((r) => setTimeout(r, 25));
}

/**
 * After the session's process group was signalled: ends whatever of the collected tree (and whatever now
 * carries the tag) still runs, TERM then KILL after `graceMs` (KILL alone when it is 0). Resolves to the pids still running after
 * that (normally none: only processes that are not ours to signal).
 */
export async function endTree(collected: readonly Proc[], tag: string | undefined, graceMs: number): Promise<number[]> {
  const all = new Map<string, Proc>();
  for (const p of [...collected, ...(tag ? sessionTree(undefined, tag) : [])]) all.set(`${p.pid}:${p.start}`, p);
  let alive = survivors([...all.values()]);
  // No grace (kill_session {force}): SIGKILL at once.
  if (alive.length && graceMs > 0) {
    signalTree(alive, "SIGTERM");
    await waitGone(alive, graceMs);
    alive = survivors(alive);
  }
  if (alive.length) {
    signalTree(alive, "SIGKILL");
    await waitGone(alive, 2000);
    alive = survivors(alive);
  }
  return alive.map((p) => p.pid);
}

/** The environment tag of a session's processes (set by the session's environment). */
export function sessionTag(id: string): string {
  return `CLAUDE_SESSIONS_ID=${id}`;
}
