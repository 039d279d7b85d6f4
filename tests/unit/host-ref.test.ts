/**
 * A session's host reference: records written by the previous server (tmux_pane_id, tmux_session, tmux_socket,
 * owner_pid at the top of the record; tests/fixtures/state/host-fields-1.0.0.json is a state.json that server wrote
 * in a real run, one tmux and one pty session) load with those fields moved into `host`, and a host that lives in a
 * server process owns a session unless another live process holds it.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ownedInProcess } from "../../src/runners/host.js";
import { parseState } from "../../src/store/parse.js";

const OLD = readFileSync(join(import.meta.dirname, "../fixtures/state/host-fields-1.0.0.json"), "utf8");
const OLD_KEYS = ["tmux_pane_id", "tmux_session", "tmux_socket", "owner_pid"];

describe("host reference", () => {
  it("the previous server's state.json loads whole, its host fields in `host`", () => {
    const raw = JSON.parse(OLD) as { sessions: Record<string, Record<string, unknown>> };
    const { state, bad } = parseState(OLD);
    expect(bad).toEqual([]);
    const ids = Object.keys(raw.sessions);
    expect(Object.keys(state.sessions).sort()).toEqual(ids.sort());
    for (const id of ids) {
      const was = raw.sessions[id]!;
      const r = state.sessions[id]!;
      for (const k of OLD_KEYS) expect(k in r, `${id}.${k}`).toBe(false);
      if (was.backend === "tmux")
        expect(r.host).toEqual({ target: was.tmux_session, pane: was.tmux_pane_id, socket: was.tmux_socket });
      else expect(r.host).toEqual({ owner_pid: was.owner_pid });
      // Everything else is as it was written.
      const rest = Object.fromEntries(Object.entries(was).filter(([k]) => !OLD_KEYS.includes(k)));
      expect(r).toMatchObject(rest);
    }
  });

  it("a record with a host reference loads as it is; a host given wins over a stray old field", () => {
    const raw = JSON.parse(OLD) as { sessions: Record<string, Record<string, unknown>> };
    const [id, rec] = Object.entries(raw.sessions).find(([, r]) => r.backend === "tmux")!;
    const { tmux_pane_id: _p, tmux_session: _s, tmux_socket: _k, ...rest } = rec;
    const now = { ...raw, sessions: { [id]: { ...rest, host: { target: "cs-x", pane: "%9" } } } };
    expect(parseState(JSON.stringify(now)).state.sessions[id]!.host).toEqual({ target: "cs-x", pane: "%9" });
    const mixed = { ...raw, sessions: { [id]: { ...rest, tmux_pane_id: "%1", host: { pane: "%9" } } } };
    expect(parseState(JSON.stringify(mixed)).state.sessions[id]!.host).toEqual({ pane: "%9" });
  });

  it("a session of a host in a server process is owned here, or by nobody once its owner is gone, never while another lives", async () => {
    expect(ownedInProcess(undefined)).toBe(true);
    expect(ownedInProcess({ owner_pid: process.pid })).toBe(true);
    expect(ownedInProcess({ owner_pid: process.ppid })).toBe(false);
    const gone = spawn("true");
    await new Promise((r) => gone.on("exit", r));
    expect(ownedInProcess({ owner_pid: gone.pid! })).toBe(true);
  });
});
