/**
 * The session layer against an in-memory backend (tests/helpers/fake-backend.ts), turns: one Enter per prompt,
 * a second one when the first is lost, every reply counted, max_turns — in milliseconds.
 */
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import { SessionError } from "../../src/core/errors.js";
import { FAKE_CLAUDE } from "../helpers/paths.js";
import { pastePieces } from "../../src/runners/terminal/screen/prompt.js";
import { until } from "../helpers/wait.js";
import { fakeService } from "../helpers/fake-service.js";
import { join } from "node:path";

const f = fakeService();

describe("session layer on a fake backend: turns", () => {
  it("starts, delivers a prompt in one Enter, and returns the reply; the backend got the exact argv", async () => {
    const s = await f.svc.start(f.startIn({ model: "sonnet;" }));
    expect(s).toMatchObject({ status: "ready", backend: "tmux", tmux_target: `cs-${s.session_id}` });
    const spec = f.fake.sessions.get(s.session_id)!.spec;
    expect(spec.argv).toEqual([
      FAKE_CLAUDE,
      `--session-id=${s.claude_session_id}`,
      `--settings=${join(f.root, "state", s.session_id, "settings.json")}`,
      "--model=sonnet;",
      "--permission-mode=default",
    ]);
    expect(spec.cwd).toBe(join(f.root, "work"));
    const r = await f.svc.send(f.sendIn(s.session_id, "hello\r\nworld"));
    expect(r).toMatchObject({ completed: true, response: "FAKE REPLY: hello\nworld", final_state: "idle" });
    expect(f.fake.sessions.get(s.session_id)!.keys.filter((k) => k === "Enter")).toHaveLength(1);
    expect(api.sendOutput.safeParse(r).success).toBe(true);
  });

  it("a prompt whose first Enter is not taken is delivered by a second one, never reported sent before", async () => {
    const s = await f.svc.start(f.startIn());
    f.fake.dropEnters = 1;
    const r = await f.svc.send(f.sendIn(s.session_id, "again"));
    expect(r.response).toBe("FAKE REPLY: again");
    expect(f.fake.sessions.get(s.session_id)!.prompts).toEqual(["again"]);
  });

  it("a prompt that reaches Claude without its end is an error naming the difference, never a success", async () => {
    const s = await f.svc.start(f.startIn());
    f.fake.lateLastPaste = 1;
    const text = "x".repeat(5000);
    const e = await f.svc.send(f.sendIn(s.session_id, text)).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).code).toBe("PROCESS_ERROR");
    expect((e as SessionError).message).toContain("expected 5000 characters, got 4999, first difference at position 4999");
    expect((e as SessionError).details).toMatchObject({ expected_chars: 5000, received_chars: 4999, first_difference_at: 4999 });
    expect(f.fake.sessions.get(s.session_id)!.prompts).toEqual(["x".repeat(4999)]);
  });

  it("text with a unique end is pasted whole in its pieces; repeated text pastes its last character alone", async () => {
    const s = await f.svc.start(f.startIn());
    const lines = Array.from({ length: 9 }, (_, i) => `line ${i + 1} of 9`).join("\n");
    await f.svc.send(f.sendIn(s.session_id, lines));
    expect(f.fake.sessions.get(s.session_id)!.pastes).toEqual(pastePieces(lines));
    const repeated = "ab".repeat(600);
    await f.svc.send(f.sendIn(s.session_id, repeated));
    const pastes = f.fake.sessions.get(s.session_id)!.pastes.slice(pastePieces(lines).length);
    expect(pastes).toEqual([...pastePieces(repeated.slice(0, -1)), "b"]);
    expect(f.fake.sessions.get(s.session_id)!.prompts).toEqual([lines, repeated]);
  });

  it("counts every turn's reply, also when the text repeats", async () => {
    f.fake.reply = () => "same";
    const s = await f.svc.start(f.startIn());
    for (const m of ["a", "b", "c"]) await f.svc.send(f.sendIn(s.session_id, m));
    // The fold reaches the file in a batched write: wait for it (bounded), then check it.
    const rec = await until(
      async () => {
        const r = (await f.store.read()).sessions[s.session_id]!;
        return r.turn_count >= 3 ? r : undefined;
      },
      5000,
      20,
    );
    expect(rec).toMatchObject({ responses_received: 3, total_chars_received: 12, messages_sent: 3, turn_count: 3 });
  });

  it("max_turns: the refusal says that resuming keeps the count", async () => {
    const s = await f.svc.start(f.startIn({ max_turns: 1 }));
    await f.svc.send(f.sendIn(s.session_id, "one"));
    const e = await f.svc.send(f.sendIn(s.session_id, "two")).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).code).toBe("LIMIT_REACHED");
    expect((e as SessionError).message).toContain("resuming keeps the count");
    expect((e as SessionError).suggestion).toMatch(/Start a new session/);
  });
});
