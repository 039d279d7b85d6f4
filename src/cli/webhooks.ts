/**
 * `claude-sessions webhooks`: the endpoints of CLAUDE_SESSIONS_WEBHOOKS (origin and events, never a secret or a
 * URL's path) and the dead letter; `webhooks replay <id>|--all` sends dead deliveries again (one try each, signed
 * anew) and removes those delivered.
 */
import { isWebhookEvent, loadWebhooks } from "../automations/webhooks/config.js";
import { readDeadLetters, endpointKey, removeDeadLetters } from "../automations/webhooks/dead-letter.js";
import { postOnce } from "../automations/webhooks/delivery.js";
import { SessionError } from "../core/errors.js";
import { loadConfig } from "../config.js";

export const WEBHOOKS_HELP = `  claude-sessions webhooks [replay <id>|--all]
                                  the webhook endpoints and the dead letter; replay sends dead deliveries again`;

export async function runWebhooksCommand(args: string[], stateDir: string, print: (s: string) => void): Promise<number> {
  const cfg = loadWebhooks(loadConfig().webhooksFile);
  const dead = await readDeadLetters(stateDir);
  if (args[0] === undefined) {
    print(cfg.file ? `endpoints (${cfg.file}):` : "no endpoints (CLAUDE_SESSIONS_WEBHOOKS is not set)");
    for (const e of cfg.endpoints)
      print(
        `  ${endpointKey(e.url)}  ${new URL(e.url).origin}  ${[...e.events].join(",")}${e.includeText ? "  include_text" : ""}`,
      );
    print(`dead letter: ${dead.length} deliver${dead.length === 1 ? "y" : "ies"}`);
    for (const d of dead)
      print(`  ${d.id}  ${d.event}  ${d.origin}  failed ${d.failed_at} after ${d.attempts} tries: ${d.error}`);
    return 0;
  }
  if (args[0] !== "replay" || !args[1] || args.length > 2)
    throw new SessionError("INVALID_ARGUMENT", "usage: claude-sessions webhooks [replay <id>|--all]");
  const chosen = args[1] === "--all" ? dead : dead.filter((d) => d.id === args[1]);
  if (!chosen.length)
    throw new SessionError("INVALID_ARGUMENT", `no dead delivery ${JSON.stringify(args[1])}`, {
      suggestion: "Run `claude-sessions webhooks` to list them.",
    });
  const byKey = new Map(cfg.endpoints.map((e) => [endpointKey(e.url), e]));
  const delivered = new Set<string>();
  let failed = 0;
  for (const d of chosen) {
    const ep = byKey.get(d.endpoint);
    if (!ep) {
      print(`${d.id}: its endpoint (${d.origin}) is no longer in the webhooks file; kept`);
      failed++;
      continue;
    }
    if (!isWebhookEvent(d.event)) {
      print(`${d.id}: its event ${JSON.stringify(d.event)} is not one this version sends; kept`);
      failed++;
      continue;
    }
    const r = await postOnce(ep, { id: d.id.split(":")[0]!, event: d.event, at: d.at, body: d.body });
    if (r.ok) delivered.add(d.id);
    else failed++;
    print(`${d.id}: ${r.ok ? "delivered" : `not delivered (${r.error}); kept`}`);
  }
  if (delivered.size) await removeDeadLetters(stateDir, delivered);
  return failed ? 1 : 0;
}
