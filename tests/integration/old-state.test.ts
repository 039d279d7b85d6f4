/**
 * Sessions outlive the server, and so across an upgrade: a live tmux session whose record the previous server wrote
 * (its host fields at the top of the record, as in tests/fixtures/state/host-fields-1.0.0.json) is adopted by this
 * server, answers prompts and is ended by kill_session; the next write of state.json keeps it in today's form.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, until, type World } from "../helpers/harness.js";

const run = tmuxOrSkip();
const OLD = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/state/host-fields-1.0.0.json"), "utf8")) as {
  sessions: Record<string, Record<string, unknown>>;
};

describe.runIf(run)("a state.json of the previous server (tmux)", () => {
  let w: World;
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(() => w?.cleanup());

  it("its live tmux session is adopted, answers and is killed; its record is kept in today's form", async () => {
    const m1 = await connect(w);
    const s = await m1.call("start_session", { cwd: w.dir("old") });
    const id = s.data.session_id as string;
    expect(
      (await m1.call("send_message", { session_id: id, message: "before the upgrade", wait_for_usage: true })).data.response,
    ).toBe("FAKE REPLY: before the upgrade");
    await m1.close(); // tmux keeps the session

    // The record as the previous server wrote it: the same session, its host fields where that server kept them.
    const path = join(w.stateDir, "state.json");
    const st = JSON.parse(readFileSync(path, "utf8")) as { sessions: Record<string, Record<string, unknown>> };
    const { host, ...rec } = st.sessions[id]! as { host: { target: string; pane: string; socket?: string } };
    expect(host.target).toBe(`cs-${id}`);
    const old = {
      ...rec,
      tmux_pane_id: host.pane,
      tmux_session: host.target,
      ...(host.socket ? { tmux_socket: host.socket } : {}),
    };
    const fixture = Object.values(OLD.sessions).find((r) => r.backend === "tmux")!;
    // The same fields as the previous server's real record (what a turn and the tmux host add), nothing of today's.
    expect(Object.keys(old).sort()).toEqual(Object.keys(fixture).sort());
    st.sessions[id] = old;
    writeFileSync(path, JSON.stringify(st, null, 2));

    const m2 = await connect(w);
    try {
      const listed = await m2.call("list_sessions", {});
      expect(listed.data.sessions.find((x) => x.session_id === id)?.status).toBe("idle");
      expect((await m2.call("send_message", { session_id: id, message: "after the upgrade" })).data.response).toBe(
        "FAKE REPLY: after the upgrade",
      );
      const saved = await until(() => {
        const r = (JSON.parse(readFileSync(path, "utf8")) as { sessions: Record<string, Record<string, unknown>> }).sessions[id]!;
        return r.last_message === "after the upgrade" ? r : undefined;
      });
      expect(saved).toMatchObject({ host: { target: `cs-${id}`, pane: host.pane } });
      for (const k of ["tmux_pane_id", "tmux_session", "tmux_socket", "owner_pid"]) expect(k in saved, k).toBe(false);
      expect((await m2.call("kill_session", { session_id: id })).data.status).toBe("killed");
    } finally {
      await m2.close();
    }
  });
});
