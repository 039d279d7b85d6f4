/**
 * Issue 31 item 3: retries never run a prompt twice. A call with an `idempotency_key` runs once per caller and key:
 * a client whose request is aborted mid-call (its connection dropped) and that retries from a new connection gets
 * the first call's result, and the fake claude's transcript holds the prompt once; a new key runs again; the same key
 * with other arguments is IDEMPOTENCY_MISMATCH; the record holds across a server restart and between two servers on
 * one state directory; a call whose server died is IDEMPOTENCY_UNKNOWN, not run again. And start_session with an
 * existing session_id and other options or a prompt is ALREADY_EXISTS naming the difference.
 * The built server as `serve --http`, real SDK clients, tmux sessions of the fake claude.
 */
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorld, ROOT, tmuxOrSkip, until, type World } from "../helpers/harness.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

const run = tmuxOrSkip();

/** How many times `text` reached the session as a prompt: the user lines of its transcript. */
async function prompted(c: HttpMcp, id: string, text: string): Promise<number> {
  const t = await c.callOk("stream_output", { session_id: id, mode: "transcript" });
  return (t.items ?? []).filter((i) => i.role === "user" && i.text === text).length;
}

/** A call aborted by its client after `ms` (the request dropped mid-call); resolves once the abort happened. */
async function abortedCall(
  c: HttpMcp,
  name: "send_message" | "run_task",
  args: Record<string, unknown>,
  ms: number,
): Promise<void> {
  const ac = new AbortController();
  const p = (c.call as (n: string, a: Record<string, unknown>, o: { signal: AbortSignal }) => Promise<unknown>)(name, args, {
    signal: ac.signal,
  }).catch(() => undefined);
  setTimeout(() => ac.abort(), ms);
  await p;
}

describe.runIf(run)("idempotency_key and ALREADY_EXISTS (HTTP, tmux)", () => {
  let w: World;
  const servers: HttpServerProc[] = [];
  const clients: HttpMcp[] = [];
  const serve = async () => {
    const s = await startHttpServer(w);
    servers.push(s);
    return s;
  };
  /** A server that runs (the last one started, or a new one). */
  const live = async () => {
    const s = servers.filter((x) => x.proc.exitCode === null && x.proc.signalCode === null).at(-1);
    return s ?? serve();
  };
  /** A client: every one has the same name and version, so they are the same caller (as a client reconnecting). */
  const client = async (s: HttpServerProc, name = "retrying-client") => {
    const c = await connectHttp(s.url, s.token, name);
    clients.push(c);
    return c;
  };
  beforeAll(() => {
    w = makeWorld();
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const s of servers) await s.stop();
    w?.cleanup();
  });

  it("send_message: a retry after the client dropped the call runs once; a new key runs again; other arguments are IDEMPOTENCY_MISMATCH; another caller is not the same call", async () => {
    const srv = await serve();
    const a = await client(srv);
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("send") });
    const text = "FAKE_SLOW:1500 count me once";
    await abortedCall(a, "send_message", { session_id: id, message: text, idempotency_key: "k-send-1" }, 300);
    await a.close();
    // The retry, from a new connection of the same client, while the first call's turn still runs: it waits for it.
    const b = await client(srv);
    const r = await b.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-send-1" }, { timeout: 30_000 });
    expect(r.response).toBe(`FAKE REPLY: ${text}`);
    expect(await prompted(b, id, text)).toBe(1);
    // Once more after it ended: the same result, still one prompt.
    const again = await b.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-send-1" });
    expect(again.sent_at).toBe(r.sent_at);
    expect(await prompted(b, id, text)).toBe(1);
    // Other arguments with the key: refused, nothing sent.
    const other = await b.call("send_message", { session_id: id, message: "another prompt", idempotency_key: "k-send-1" });
    expect(other.error?.code).toBe("IDEMPOTENCY_MISMATCH");
    expect(await prompted(b, id, "another prompt")).toBe(0);
    // A new key is a new call.
    await b.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-send-2" });
    expect(await prompted(b, id, text)).toBe(2);
    // Another caller (another client name) with the same key: its own call.
    const c = await client(srv, "another-client");
    await c.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-send-1" });
    expect(await prompted(b, id, text)).toBe(3);
    // The record names no key and holds no prompt text: one file per (caller, tool, key), named by a hash.
    const files = readdirSync(join(w.stateDir, "idempotency"));
    expect(files.filter((f) => /^[0-9a-f]{64}\.json$/.test(f)).length).toBe(3);
    expect(files.join("\n")).not.toContain("k-send");
  });

  it("a client process killed (-9) mid-call: the server runs on, and the retry (the same client name from another connection) runs the prompt once", async () => {
    const srv = await live();
    const a = await client(srv);
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("killed-client") });
    const text = "FAKE_SLOW:1500 the client dies";
    // Another process: an SDK client over HTTP that sends and is killed while the turn runs.
    const code = `
      import { Client } from "@modelcontextprotocol/sdk/client/index.js";
      import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
      const t = new StreamableHTTPClientTransport(new URL(process.env.URL + "/mcp"), { requestInit: { headers: { authorization: "Bearer " + process.env.TOKEN } } });
      const c = new Client({ name: "retrying-client", version: "1.0.0" });
      await c.connect(t);
      console.log("connected");
      await c.callTool({ name: "send_message", arguments: JSON.parse(process.env.ARGS) });`;
    const args = { session_id: id, message: text, idempotency_key: "k-killed-client" };
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", URL: srv.url, TOKEN: srv.token, ARGS: JSON.stringify(args) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
    await until(() => out.includes("connected"), 20_000);
    await until(
      async () => (await a.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.status === "busy",
      20_000,
    );
    const gone = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await gone;
    const r = await a.callOk("send_message", args, { timeout: 30_000 });
    expect(r.response).toBe(`FAKE REPLY: ${text}`);
    expect(await prompted(a, id, text)).toBe(1);
  });

  it("run_task: a retry after the client dropped the call starts one session and runs the prompt once", async () => {
    const srv = await live();
    const a = await client(srv);
    const before = (await a.callOk("list_sessions", { status_filter: "all" })).sessions.length;
    const text = "FAKE_SLOW:1200 one task";
    const args = { cwd: w.dir("task"), prompt: text, backend: "tmux", idempotency_key: "k-task-1" } as const;
    await abortedCall(a, "run_task", args, 400);
    const b = await client(srv);
    const r = await b.callOk("run_task", args, { timeout: 30_000 });
    expect(r.response).toBe(`FAKE REPLY: ${text}`);
    const after = (await b.callOk("list_sessions", { status_filter: "all" })).sessions;
    expect(after.length).toBe(before + 1);
    expect(await prompted(b, r.session_id, text)).toBe(1);
    // A new key: a second session and a second run.
    const r2 = await b.callOk("run_task", { ...args, idempotency_key: "k-task-2" });
    expect(r2.session_id).not.toBe(r.session_id);
    expect((await b.callOk("list_sessions", { status_filter: "all" })).sessions.length).toBe(before + 2);
  });

  it("holds across a restart, and between two servers on one state directory (the second waits for the first's call)", async () => {
    const first = await live();
    const a = await client(first);
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("two") });
    const text = "FAKE_SLOW:2000 two servers";
    const second = await serve();
    const b = await client(second);
    // The call runs on the first server; the same call on the second server waits for it and returns its result.
    const one = a.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-two" }, { timeout: 30_000 });
    await until(async () => (await b.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.status === "busy");
    const two = await b.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-two" }, { timeout: 30_000 });
    expect(two.sent_at).toBe((await one).sent_at);
    expect(two.response).toBe(`FAKE REPLY: ${text}`);
    expect(await prompted(b, id, text)).toBe(1);
    // Both servers restart: the record is in the state directory.
    await a.close();
    await b.close();
    await first.stop();
    await second.stop();
    const third = await serve();
    const c = await client(third);
    const three = await c.callOk("send_message", { session_id: id, message: text, idempotency_key: "k-two" });
    expect(three.sent_at).toBe((await one).sent_at);
    expect(await prompted(c, id, text)).toBe(1);
  });

  it("a call whose server was killed mid-call is IDEMPOTENCY_UNKNOWN on retry, and is not run again", async () => {
    const srv = await live();
    // This client's server is killed under it: it is left alone afterwards (no DELETE to a dead server).
    const a = await connectHttp(srv.url, srv.token, "retrying-client");
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("killed") });
    const text = "FAKE_SLOW:1500 the server dies";
    void a
      .call("send_message", { session_id: id, message: text, idempotency_key: "k-killed" }, { timeout: 5000 })
      .catch(() => undefined);
    await until(async () => (await a.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.status === "busy");
    const gone = new Promise((r) => srv.proc.once("exit", r));
    srv.proc.kill("SIGKILL");
    await gone;
    servers.splice(servers.indexOf(srv), 1); // ended already
    void a.client.close().catch(() => {});
    const next = await serve();
    const b = await client(next);
    const r = await b.call("send_message", { session_id: id, message: text, idempotency_key: "k-killed" });
    expect(r.error?.code).toBe("IDEMPOTENCY_UNKNOWN");
    await until(
      async () => (await b.callOk("list_sessions", {})).sessions.find((s) => s.session_id === id)?.status === "idle",
      20_000,
    );
    expect(await prompted(b, id, text)).toBe(1);
  });

  it("a bad key is INVALID_ARGUMENT and nothing runs", async () => {
    const srv = await live();
    const a = await client(srv);
    const { session_id: id } = await a.callOk("start_session", { cwd: w.dir("badkey") });
    for (const key of ["", "has space", "x".repeat(129), "tab\there", "nul\0"]) {
      const r = await a.call("send_message", { session_id: id, message: "never sent", idempotency_key: key });
      expect(r.error?.code, key).toBe("INVALID_ARGUMENT");
    }
    expect(await prompted(a, id, "never sent")).toBe(0);
  });

  it("start_session with an existing session_id: the same options and no prompt is that session; other options or a prompt is ALREADY_EXISTS naming the difference; a keyed retry with a prompt gets its first result", async () => {
    const srv = await live();
    const a = await client(srv);
    const cwd = w.dir("chosen");
    const first = await a.callOk("start_session", { session_id: "chosen-1", cwd, model: "sonnet" });
    const same = await a.callOk("start_session", { session_id: "chosen-1", cwd, model: "sonnet" });
    expect(same.session_id).toBe(first.session_id);
    const model = await a.call("start_session", { session_id: "chosen-1", cwd, model: "opus" });
    expect(model.error?.code).toBe("ALREADY_EXISTS");
    expect(model.error?.details?.differences).toEqual(["model"]);
    expect(model.error?.message).toContain("model");
    const prompt = await a.call("start_session", { session_id: "chosen-1", cwd, model: "sonnet", prompt: "dropped before" });
    expect(prompt.error?.code).toBe("ALREADY_EXISTS");
    expect(prompt.error?.details?.differences).toEqual(["prompt"]);
    const both = await a.call("start_session", { session_id: "chosen-1", cwd: w.dir("elsewhere"), prompt: "x" });
    expect(both.error?.details?.differences).toEqual(["cwd", "model", "prompt"]);
    expect(await prompted(a, "chosen-1", "dropped before")).toBe(0);
    // With a key, the retried start with a prompt is the first call's result, not ALREADY_EXISTS.
    const args = { session_id: "chosen-2", cwd, prompt: "FAKE_SLOW:300 first prompt", idempotency_key: "k-start" };
    const s1 = await a.callOk("start_session", args);
    const s2 = await a.callOk("start_session", args);
    expect(s2).toEqual(s1);
    await until(async () => (await prompted(a, "chosen-2", args.prompt)) === 1);
  });
});
