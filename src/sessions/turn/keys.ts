/**
 * The keys of one session: its send lock (one caller at a time across every server sharing the state directory)
 * and one delivery of a prompt through the session's driver, counted once Claude accepted it. Below the wake, the
 * turn and the control calls, which all take these keys.
 */
import { join } from "node:path";
import type { CallContext } from "../../core/context.js";
import type { Delivery } from "../../runners/driver.js";
import { withFileLock } from "../../util/proc/flock.js";
import { runnerOf, type Deps } from "../deps.js";
import { beginTurn } from "../spend/cost.js";
import { checkSpendable } from "../spend/pool.js";

/** How long a call waits for another caller's keys to this session (a paste and its confirmation). */
export const SEND_LOCK_MS = 30_000;

export async function countSent(d: Deps, id: string, text: string): Promise<void> {
  await d.store.patch(id, (rec) => {
    rec.last_message = text;
    rec.messages_sent += 1;
    rec.total_chars_sent += text.length;
    rec.last_active = new Date().toISOString();
  });
}

/**
 * Keys for one session, one caller at a time across every server sharing the state directory: a paste, its Enter
 * and the confirmation (or a dialog's answer) must not interleave with another server's.
 */
export function withSessionKeys<T>(d: Deps, id: string, timeoutMs: number, ctx: CallContext, fn: () => Promise<T>): Promise<T> {
  return withFileLock(join(d.registry.paths(id).dir, "send.lock"), fn, {
    timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

/** Delivers a validated prompt through the session's driver and counts it once Claude accepted it. */
export async function deliverPrompt(d: Deps, id: string, text: string, ctx: CallContext): Promise<string> {
  const r = await d.registry.record(id);
  const { driver } = runnerOf(d, r.backend);
  const s = await d.registry.handle(id);
  await checkSpendable(d, r);
  const delivery = await withSessionKeys(d, id, SEND_LOCK_MS, ctx, async () => {
    await beginTurn(d, r, s.live.fold, s.live.fold.prompts_submitted + 1, text);
    return driver.deliver(s, text, ctx);
  });
  await countSent(d, id, text);
  return delivery.sent_at;
}

/** The first prompt, which travelled with the launch (launch.ts): counted once Claude accepted it. */
export async function confirmCarried(d: Deps, id: string, text: string, carried: Promise<Delivery>): Promise<string> {
  const delivery = await carried;
  await countSent(d, id, text);
  return delivery.sent_at;
}
