/**
 * The fleet bench's small form (issue 36): one coordinator, 3 test hosts × 20 fake-CLI sessions and 3 here, a
 * 50-member team spread over every node (scripts/bench/phases/fleet.mjs, `npm run bench -- --only=fleet` runs it
 * at 10 × 50). What a user checks: every session in one listing, every member answering a broadcast, a cut node's
 * sessions marked (the rest unchanged, another node's session answering) and the node back once restored; the phase
 * throws on any of these. The figures are printed; their targets are the bench's (they do not gate under load).
 * With `fleetLive` (CS_BENCH_FLEET_LIVE, how 10 × 50 fits in memory) only that many sessions per node stay live, the
 * others hibernated once started; every listing must still hold them all, the hibernated ones as `hibernated`.
 */
import { describe, expect, it } from "vitest";
import { fleet } from "../../scripts/bench/phases/fleet.mjs";
import { tmuxOrSkip } from "../helpers/harness.js";
import { testHostsOrSkip } from "../helpers/test-hosts.mjs";

const enabled = tmuxOrSkip() && testHostsOrSkip();

describe.skipIf(!enabled)("the fleet, small", () => {
  it("3 nodes × 20 sessions behind one coordinator: listed, broadcast to, one node cut and restored", async () => {
    const cfg = {
      fleetHosts: 3,
      fleetSessions: 20,
      fleetLocal: 3,
      fleetStartParallel: 3,
      fleetRestSeconds: 3,
      fleetListCalls: 10,
      fleetStopRounds: 5,
      fleetBroadcastRounds: 1,
    };
    const rows = await fleet(cfg, (s: string) => console.log(s));
    for (const r of rows) console.log(`${r.key}: p50 ${r.p50 ?? "-"} ms; ${r.notes ?? ""}`);
    const by = new Map(rows.map((r) => [r.key, r]));
    expect([...by.keys()]).toEqual(["fleet_list", "fleet_stop_wait", "fleet_broadcast", "fleet_cut", "fleet_coordinator"]);
    const b = by.get("fleet_broadcast")!.data!;
    // Every member's turn end reached the client as a notice.
    expect(b.notices_reached).toBe(b.notices_expected);
    // The cut node was marked within the outage's detection bound (heartbeat 1 s + ping 3 s, and a listing).
    expect(by.get("fleet_cut")!.data!.marked_ms as number).toBeLessThan(10_000);
    expect(by.get("fleet_coordinator")!.data!.rss_load_mib as number).toBeLessThan(300);
  }, 600_000);

  it("3 nodes × 6 sessions, 2 kept live on each: the others hibernated, in every listing as such, the figures say so", async () => {
    const cfg = {
      fleetHosts: 3,
      fleetSessions: 6,
      fleetLocal: 2,
      fleetLive: 2,
      fleetStartParallel: 3,
      fleetRestSeconds: 1,
      fleetListCalls: 5,
      fleetStopRounds: 3,
      fleetBroadcastRounds: 1,
    };
    const rows = await fleet(cfg, (s: string) => console.log(s));
    for (const r of rows) console.log(`${r.key}: p50 ${r.p50 ?? "-"} ms; ${r.notes ?? ""}`);
    // Live: h1 and h2 their 2 team members, h3 its 2 and the 3 sessions of the Stop → wait figure, 2 here; 9 hibernated.
    expect(rows).toHaveLength(5);
    for (const r of rows) {
      expect(r.figure).toContain("(20 sessions: 11 live, 9 hibernated)");
      expect(r.data).toMatchObject({ live: 11, hibernated: 9 });
    }
    const by = new Map(rows.map((r) => [r.key, r]));
    // The team is capped at 2 per node, every member answering and its turn's notice reaching the client.
    expect(by.get("fleet_broadcast")!.figure).toContain("a 6-member team on 3 nodes");
    const b = by.get("fleet_broadcast")!.data!;
    expect(b.notices_reached).toBe(b.notices_expected);
    // The cut node (h2) had 4 of its 6 sessions hibernated: listed unreachable and still hibernated, and back.
    expect(by.get("fleet_cut")!.notes).toContain("its 6 sessions listed unreachable, 4 of them hibernated");
  }, 600_000);
});
