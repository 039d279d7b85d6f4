/**
 * The prompts a team member sends to teammates (message_teammate, handoff with `to`, request_shutdown telling a live
 * lead) are limited per member:
 * CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN in any 60 s (a member once queued 217 paid prompts in 20 s). Past it the
 * call is RATE_LIMITED with `details.retry_after_ms` and sends nothing. Kept in memory per server.
 */
import { SessionError } from "../../core/errors.js";

const WINDOW_MS = 60_000;

export class MemberRate {
  private readonly sent = new Map<string, number[]>();

  constructor(private readonly perMin: () => number) {}

  /** Counts one prompt of member `id`, or throws RATE_LIMITED (nothing counted). */
  take(id: string, tool: string, now = Date.now()): void {
    const max = this.perMin();
    if (max <= 0) return;
    const list = (this.sent.get(id) ?? []).filter((t) => t > now - WINDOW_MS);
    if (list.length >= max) {
      this.sent.set(id, list);
      const retry = Math.max(1, list[0]! + WINDOW_MS - now);
      throw new SessionError(
        "RATE_LIMITED",
        `${tool}: you sent ${list.length} prompts to teammates in the last minute, the most CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN ` +
          `(${max}) allows; nothing was sent.`,
        {
          suggestion: `Try again in ${Math.ceil(retry / 1000)} s (details.retry_after_ms), or put several things in one message.`,
          details: { retry_after_ms: retry, limit_per_min: max },
        },
      );
    }
    list.push(now);
    this.sent.set(id, list);
    // Members that stopped sending are forgotten.
    if (this.sent.size > 1000) for (const [k, v] of this.sent) if (!v.some((t) => t > now - WINDOW_MS)) this.sent.delete(k);
  }
}

const rates = new WeakMap<object, MemberRate>();

/** The one limiter of a server (its session service). */
export function rateOf(owner: object, perMin: () => number): MemberRate {
  let r = rates.get(owner);
  if (!r) rates.set(owner, (r = new MemberRate(perMin)));
  return r;
}
