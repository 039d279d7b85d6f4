/**
 * Issue 31 item 3 with the real CLI (offline, the mock API's request log as the count): over HTTP (`serve --http`),
 * a `send_message` and a `run_task` whose client aborted the request mid-turn, retried from a new connection with the
 * same idempotency_key, reach the API once and return the first call's reply; a new key reaches it again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";
import { e2eWorld, realClaudeOrSkip, type E2e } from "../helpers/real-claude.js";

const run = realClaudeOrSkip();

/** A call aborted by its client after `ms` (the request dropped mid-turn); resolves once it is aborted. */
async function aborted(c: HttpMcp, name: "send_message" | "run_task", args: Record<string, unknown>, ms: number): Promise<void> {
  const ac = new AbortController();
  const p = (c.call as (n: string, a: Record<string, unknown>, o: { signal: AbortSignal }) => Promise<unknown>)(name, args, {
    signal: ac.signal,
  }).catch(() => undefined);
  setTimeout(() => ac.abort(), ms);
  await p;
}

describe.runIf(run)("real claude: a retried call with an idempotency_key reaches the API once", () => {
  let e: E2e;
  let srv: HttpServerProc;
  const clients: HttpMcp[] = [];
  const client = async () => {
    const c = await connectHttp(srv.url, srv.token, "e2e-retrying-client");
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    e = await e2eWorld({ dirs: ["send", "task"] });
    srv = await startHttpServer(e.world);
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await srv?.stop();
    expect(e?.mock.stray ?? [], "no traffic may leave for anywhere but the mock").toEqual([]);
    await e?.cleanup();
  });

  it("send_message (headless): aborted mid-turn, retried with the key: one request, the first call's reply; a new key: a second request", async () => {
    const a = await client();
    const s = await a.callOk("start_session", { cwd: e.dir("send"), backend: "headless", permission_mode: "default" });
    const text = "MOCK_SLOW:2 count this prompt once";
    await aborted(
      a,
      "send_message",
      { session_id: s.session_id, message: text, idempotency_key: "e2e-send-1", timeout_ms: 60_000 },
      700,
    );
    const b = await client();
    const r = await b.callOk(
      "send_message",
      { session_id: s.session_id, message: text, idempotency_key: "e2e-send-1", timeout_ms: 60_000 },
      { timeout: 90_000 },
    );
    expect(r.response).toContain("MOCK REPLY");
    expect(e.requestsWith(text)).toHaveLength(1);
    await b.callOk(
      "send_message",
      { session_id: s.session_id, message: text, idempotency_key: "e2e-send-2", timeout_ms: 60_000 },
      { timeout: 90_000 },
    );
    expect(e.requestsWith(text)).toHaveLength(2);
    await b.callOk("kill_session", { session_id: s.session_id });
  });

  it("run_task: aborted mid-turn, retried with the key: one session, one request", async () => {
    const a = await client();
    const text = "MOCK_SLOW:2 one task";
    const args = {
      cwd: e.dir("task"),
      prompt: text,
      permission_mode: "default",
      idempotency_key: "e2e-task-1",
      timeout_ms: 60_000,
    } as const;
    await aborted(a, "run_task", args, 1500);
    const b = await client();
    const r = await b.callOk("run_task", args, { timeout: 90_000 });
    expect(r.response).toContain("MOCK REPLY");
    expect(e.requestsWith(text)).toHaveLength(1);
    const rows = (await b.callOk("list_sessions", { status_filter: "all" })).sessions.filter((x) => x.cwd === e.dir("task"));
    expect(rows.map((x) => x.session_id)).toEqual([r.session_id]);
  });
});
