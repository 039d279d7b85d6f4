/**
 * server/mcp/resources.ts over a real MCP client and server (in-memory transport) and the session layer on the fake
 * backend: a subscription's pending screen update ends with the subscription (no update after unsubscribe, no timer
 * left), and a session whose record is deleted takes its subscriptions with it; one released after its end keeps them.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import {
  installResources,
  RESOURCE_KINDS,
  resourceUri,
  SCREEN_EVERY_MS,
  type InstalledResources,
} from "../../src/server/mcp/resources.js";
import { createLogger } from "../../src/util/log.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/wait.js";

const f = fakeService();
let res: InstalledResources | undefined;
let client: Client | undefined;

afterEach(async () => {
  res?.stop();
  await client?.close();
  res = client = undefined;
});

async function connected(): Promise<{ updates: string[] }> {
  const server = new Server(
    { name: "resources-test", version: "0" },
    { capabilities: { resources: { subscribe: true, listChanged: true } } },
  );
  res = installResources(server, f.svc, createLogger({ level: "error" }));
  client = new Client({ name: "resources-test-client", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  return { updates };
}

/** One event in the session's log (a Notification that changes nothing): the change feed runs for it. */
const poke = (id: string) => f.svc.deps.registry.emit(id, { hook_event_name: "Notification", notification_type: "idle_prompt" });

describe("resource subscriptions", () => {
  it("unsubscribing a screen cancels its pending update: no timer is left and no update comes", async () => {
    const { updates } = await connected();
    const { session_id: id } = await f.svc.start(f.startIn());
    const screen = resourceUri(id, "screen");
    await client!.subscribeResource({ uri: screen });
    await poke(id);
    expect(res!.kept).toEqual({ subscriptions: 1, timers: 1 });
    await client!.unsubscribeResource({ uri: screen });
    expect(res!.kept).toEqual({ subscriptions: 0, timers: 0 });
    // Past the coalescing window: the cancelled update never went out.
    await new Promise((r) => setTimeout(r, SCREEN_EVERY_MS + 100));
    expect(updates).not.toContain(screen);
    // A subscribed screen still gets its update (the test above can fail).
    await client!.subscribeResource({ uri: screen });
    await poke(id);
    await until(async () => updates.includes(screen), 5000, 10);
    expect(res!.kept.timers).toBe(0);
  });

  it("a session whose record is deleted loses its subscriptions; one released after its end keeps them", async () => {
    await connected();
    const kept = await f.svc.start(f.startIn());
    const gone = await f.svc.start(f.startIn());
    for (const s of [kept, gone])
      for (const kind of RESOURCE_KINDS) await client!.subscribeResource({ uri: resourceUri(s.session_id, kind) });
    await poke(gone.session_id);
    // The poke arms one screen update (it may already have gone out on a loaded machine: the window is short).
    expect(res!.kept.subscriptions).toBe(8);
    expect(res!.kept.timers).toBeLessThanOrEqual(1);
    await f.svc.kill(api.killInput.parse({ session_id: gone.session_id, save_state: false }));
    expect(res!.kept).toEqual({ subscriptions: 4, timers: 0 });
    // Ended with its record kept: released 30 ms later (the fixture), still subscribed (a resume brings updates).
    await f.svc.kill(api.killInput.parse({ session_id: kept.session_id }));
    await until(async () => f.svc.followed === 0, 5000, 10);
    expect(res!.kept).toEqual({ subscriptions: 4, timers: 0 });
  });
});
