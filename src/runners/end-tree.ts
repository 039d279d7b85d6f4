/**
 * Ending a session's process tree, the one way every host does it: the tree (the leader's descendants and the
 * processes tagged with the session's id) is collected before any signal, since a dying parent orphans what it
 * started; the host ends its leader its own way (tmux: the pane's group and a nudge to reap; pty: the group and the
 * terminal's exit; headless: EOF on stdin, then SIGKILL); then whatever of the tree is left is ended here.
 */
import { endTree, sessionTag, sessionTree } from "../util/proc/proctree.js";
import type { KillResult } from "./host.js";

/** Longest wait for the rest of the tree after the leader (never longer than the caller's grace). */
const REST_GRACE_MAX_MS = 2000;

export async function killTree(
  id: string,
  leader: number | undefined,
  graceMs: number,
  endLeader: () => Promise<KillResult>,
): Promise<KillResult> {
  const tag = sessionTag(id);
  const tree = sessionTree(leader, tag);
  const res = await endLeader();
  const left = await endTree(tree, tag, Math.min(graceMs, REST_GRACE_MAX_MS));
  return left.length ? { ...res, left } : res;
}

/** Ends what is left of a session's earlier run (found by its tag, never by a stored pid that may have been reused); how many there were. */
export async function endLeftovers(id: string, graceMs: number): Promise<number> {
  const lingering = sessionTree(undefined, sessionTag(id));
  if (lingering.length) await endTree(lingering, undefined, graceMs);
  return lingering.length;
}
