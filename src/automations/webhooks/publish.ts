/**
 * Feeds the server's change stream to the webhooks: every session change that is a webhook event (events.ts) is
 * published with the session's team from its record. Publishing only queues (delivery.ts), so the change feed
 * never waits for an endpoint.
 */
import type { SessionService } from "../../sessions/service.js";
import type { Webhooks } from "./delivery.js";
import { webhookOf } from "./events.js";

export function publishSessionEvents(svc: SessionService, hooks: Webhooks): () => void {
  return svc.subscribe((c) => {
    const n = webhookOf(c);
    if (!n) return;
    const at = new Date();
    void svc.deps.store
      .get(c.session_id)
      .catch(() => undefined)
      .then((r) =>
        hooks.publish(
          {
            ...n,
            fields: {
              ...n.fields,
              ...(r?.team_name ? { team_name: r.team_name } : {}),
              ...(r?.teammate_name ? { teammate_name: r.teammate_name } : {}),
            },
          },
          at,
        ),
      );
  });
}
