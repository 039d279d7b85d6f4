/**
 * One place forgets a session: a server that started and ended 1,000 sessions (against the in-memory backend)
 * keeps nothing of them — no session object (sessions/session.ts: follower, statuses and turns seen, the cost
 * ledger, the screen watch, context-sync snapshot, deadline) and nothing in the server-wide maps that remain
 * (status writes queued, resumes, end reasons, drivers' results). Slow for the unit tier (a thousand starts), so here.
 */
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import type { Session } from "../../src/sessions/session.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/harness.js";

const f = fakeService({ MAX_CONCURRENT_SESSIONS: "20" });

describe("per-session state", () => {
  it("after 1,000 sessions started, given a turn and ended, the server's maps are back to their size before", async () => {
    const before = f.svc.footprint;
    const batch = 10;
    const N = Number(process.env.CS_FOOTPRINT_N ?? 1000);
    let peak = 0;
    // Every tenth session's object, kept here to look at after the server let go of it.
    const objects: Session[] = [];
    for (let i = 0; i < N; i += batch) {
      await Promise.all(
        Array.from({ length: batch }, async (_, j) => {
          const s = await f.svc.start(f.startIn());
          peak = Math.max(peak, f.svc.footprint.sessions ?? 0);
          const obj = f.svc.deps.registry.session(s.session_id);
          // Ready: its MAX_SESSION_DURATION deadline is armed on it.
          expect(obj?.timers).toBeGreaterThan(0);
          if ((i + j) % 10 === 0 && obj) objects.push(obj);
          // Every fifth one takes a turn (statuses, turns and the cost ledger see it).
          if ((i + j) % 5 === 0) await f.svc.send(f.sendIn(s.session_id, `hello ${i + j}`));
          // Half keep their record (released after the end), half are forgotten at once (dropped).
          await f.svc.kill(api.killInput.parse({ session_id: s.session_id, save_state: (i + j) % 2 === 0 }));
        }),
      );
    }
    // Ended followers are released 30 ms after the end (the fixture's releaseAfterMs).
    await until(async () => f.svc.followed === 0, 10_000, 20);
    await until(async () => JSON.stringify(f.svc.footprint) === JSON.stringify(before), 5000, 20).catch(() => undefined);
    expect(f.svc.footprint).toEqual(before);
    // The count is of something: while sessions ran, the server kept an object for each.
    expect(peak).toBeGreaterThan(before.sessions ?? 0);
    // The objects were made (one per session, with its MAX_SESSION_DURATION deadline armed) and let go with every timer stopped.
    expect(objects.length).toBe(N / 10);
    for (const o of objects) {
      expect(f.svc.deps.registry.session(o.id)).toBeUndefined();
      expect(o.timers).toBe(0);
    }
  }, 300_000);
});
