import http from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startMockApi, type MockApi } from "../fixtures/mock-anthropic.js";
import { until } from "../helpers/wait.js";

interface SseEvent {
  event: string;
  data: any;
}

function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const chunk of text.split("\n\n")) {
    if (!chunk.trim()) continue;
    let event = "";
    let data = "";
    for (const line of chunk.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    out.push({ event, data: JSON.parse(data) });
  }
  return out;
}

function userBody(content: unknown, extra: Record<string, unknown> = {}) {
  return {
    model: "claude-test-model",
    max_tokens: 1024,
    stream: true,
    tools: [{ name: "Bash", input_schema: { type: "object" } }],
    messages: [{ role: "user", content }],
    ...extra,
  };
}

async function post(api: MockApi, body: unknown, init: RequestInit = {}) {
  return fetch(`${api.url}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "sk-test", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
    ...init,
  });
}

/** Rebuilds the content blocks from a stream, as the SDK would. */
function assemble(events: SseEvent[]) {
  const blocks: any[] = [];
  const json: string[] = [];
  for (const e of events) {
    if (e.event === "content_block_start") {
      blocks[e.data.index] = { ...e.data.content_block };
      json[e.data.index] = "";
    } else if (e.event === "content_block_delta") {
      const d = e.data.delta;
      if (d.type === "text_delta") blocks[e.data.index].text += d.text;
      else if (d.type === "input_json_delta") json[e.data.index] += d.partial_json;
    } else if (e.event === "content_block_stop") {
      if (blocks[e.data.index].type === "tool_use") blocks[e.data.index].input = JSON.parse(json[e.data.index] || "{}");
    }
  }
  return blocks;
}

describe("mock Anthropic Messages API", () => {
  let api: MockApi;
  beforeEach(async () => {
    api = await startMockApi();
  });
  afterEach(async () => {
    await api.close();
  });

  it("listens on 127.0.0.1 with a random port", () => {
    expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(api.port).toBeGreaterThan(0);
  });

  it("streams a text reply with event and data lines in the documented order", async () => {
    const res = await post(api, userBody("say hi"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const raw = await res.text();
    // every event has an event: line followed by a data: line
    for (const chunk of raw.split("\n\n").filter((c) => c.trim())) {
      expect(chunk).toMatch(/^event: [a-z_]+\ndata: \{.*\}$/s);
    }
    const events = parseSse(raw);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names[1]).toBe("ping");
    expect(names.at(-2)).toBe("message_delta");
    expect(names.at(-1)).toBe("message_stop");
    expect(names.slice(2, -2).filter((n) => n !== "content_block_delta")).toEqual(["content_block_start", "content_block_stop"]);
    for (const e of events) expect(e.data.type).toBe(e.event);

    const start = events[0]!.data.message;
    expect(start.role).toBe("assistant");
    expect(start.model).toBe("claude-test-model");
    expect(start.usage.input_tokens).toBeGreaterThan(0);
    expect(start.id).toMatch(/^msg_/);

    const delta = events.at(-2)!.data;
    expect(delta.delta.stop_reason).toBe("end_turn");
    expect(delta.usage.output_tokens).toBeGreaterThan(0);

    expect(assemble(events)).toEqual([{ type: "text", text: "MOCK REPLY: say hi" }]);

    expect(api.requests).toHaveLength(1);
    const rec = api.requests[0]!;
    expect(rec).toMatchObject({
      method: "POST",
      path: "/v1/messages",
      url: "/v1/messages?beta=true",
      stream: true,
      lastUserText: "say hi",
      isSideRequest: false,
      outcome: "completed",
    });
    expect(rec.headers["x-api-key"]).toBe("sk-test");
    expect(rec.body.model).toBe("claude-test-model");
    expect(api.stray).toHaveLength(0);
  });

  it("uses the last text block of the last user message, skipping system reminders", async () => {
    const body = userBody([
      { type: "text", text: "<system-reminder>ignore me</system-reminder>" },
      { type: "text", text: "the prompt" },
      { type: "text", text: "<system-reminder>also ignored</system-reminder>" },
    ]);
    body.messages = [
      { role: "user", content: "earlier prompt" },
      { role: "assistant", content: [{ type: "text", text: "MOCK REPLY: earlier prompt" }] },
      ...body.messages,
    ];
    const events = parseSse(await (await post(api, body)).text());
    expect(assemble(events)).toEqual([{ type: "text", text: "MOCK REPLY: the prompt" }]);
  });

  it("streams a Bash tool_use after a text block, with input_json_delta", async () => {
    const events = parseSse(await (await post(api, userBody("MOCK_BASH:echo hi > f.txt"))).text());
    const blocks = assemble(events);
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toEqual({ type: "text", text: "MOCK: running a command." });
    expect(blocks[1]).toMatchObject({
      type: "tool_use",
      name: "Bash",
      input: { command: "echo hi > f.txt", description: "mock command" },
    });
    expect(blocks[1].id).toMatch(/^toolu_/);
    const toolStart = events.find((e) => e.event === "content_block_start" && e.data.index === 1)!;
    expect(toolStart.data.content_block.input).toEqual({});
    expect(events.some((e) => e.data.delta?.type === "input_json_delta")).toBe(true);
    expect(events.at(-2)!.data.delta.stop_reason).toBe("tool_use");
    expect(api.requests[0]!.reply?.kind).toBe("tool_use");
  });

  it("answers a Write directive with a Write tool_use", async () => {
    const blocks = assemble(parseSse(await (await post(api, userBody("MOCK_WRITE:/tmp/x/out.txt:hello: world"))).text()));
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({
      type: "tool_use",
      name: "Write",
      input: { file_path: "/tmp/x/out.txt", content: "hello: world" },
    });
  });

  it("replies to tool results with done or failed", async () => {
    const ok = userBody([{ type: "tool_result", tool_use_id: "toolu_1", content: "hi" }]);
    expect(assemble(parseSse(await (await post(api, ok)).text()))).toEqual([{ type: "text", text: "MOCK: tool done" }]);
    const denied = userBody([
      {
        type: "tool_result",
        tool_use_id: "toolu_2",
        is_error: true,
        content: [{ type: "text", text: "The user doesn't want to proceed" }],
      },
      { type: "text", text: "<system-reminder>x</system-reminder>" },
    ]);
    expect(assemble(parseSse(await (await post(api, denied)).text()))).toEqual([{ type: "text", text: "MOCK: tool failed" }]);
    expect(api.requests[1]!.toolResult).toEqual({
      toolUseId: "toolu_2",
      isError: true,
      text: "The user doesn't want to proceed",
    });
    // a new prompt typed after an interrupted tool is a user turn again
    const after = userBody([
      { type: "tool_result", tool_use_id: "toolu_3", is_error: true, content: "interrupted" },
      { type: "text", text: "[Request interrupted by user for tool use]" },
      { type: "text", text: "next question" },
    ]);
    expect(assemble(parseSse(await (await post(api, after)).text()))).toEqual([
      { type: "text", text: "MOCK REPLY: next question" },
    ]);
  });

  it("answers stream: false with a Message JSON", async () => {
    const res = await post(api, userBody("MOCK_BASH:ls", { stream: false }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const msg: any = await res.json();
    expect(msg).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-test-model",
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "MOCK: running a command." },
        { type: "tool_use", name: "Bash", input: { command: "ls", description: "mock command" } },
      ],
    });
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
    const plain: any = await (await post(api, userBody("hello", { stream: false }))).json();
    expect(plain.content).toEqual([{ type: "text", text: "MOCK REPLY: hello" }]);
    expect(plain.stop_reason).toBe("end_turn");
  });

  it("answers MOCK_ERROR with that status and an Anthropic error body", async () => {
    for (const status of [500, 429, 400]) {
      const res = await post(api, userBody(`MOCK_ERROR:${status}`));
      expect(res.status).toBe(status);
      expect(await res.json()).toEqual({ type: "error", error: { type: "api_error", message: `mock error ${status}` } });
    }
    expect(api.requests.map((r) => r.outcome)).toEqual(["error", "error", "error"]);
  });

  it("limits MOCK_LIMIT:…:key=<part> only for the account whose credentials hold <part>", async () => {
    const text = `switch MOCK_LIMIT:rate:60:key=ACCTA ${Date.now()}`;
    const as = (headers: Record<string, string>) =>
      post(api, userBody(text, { stream: false }), {
        headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
      });
    const a = await as({ "x-api-key": "sk-ant-ACCTA-0001" });
    expect(a.status).toBe(429);
    expect(a.headers.get("retry-after")).toMatch(/^\d+$/);
    // The same prompt again on A (before the reset) is limited again; on B (another key, or a bearer token) it is answered.
    expect((await as({ "x-api-key": "sk-ant-ACCTA-0001" })).status).toBe(429);
    const b = await as({ "x-api-key": "sk-ant-ACCTB-0002" });
    expect(b.status).toBe(200);
    expect(((await b.json()) as { content: unknown }).content).toEqual([{ type: "text", text: `MOCK REPLY: ${text}` }]);
    expect((await as({ authorization: "Bearer oauth-ACCTB" })).status).toBe(200);
    expect((await as({ authorization: "Bearer oauth-ACCTA" })).status).toBe(429);
    // Without key= every account is limited, as before.
    const all = `all MOCK_LIMIT:rate:60 ${Date.now()}`;
    expect((await post(api, userBody(all, { stream: false }))).status).toBe(429);
    expect(api.requests.map((r) => r.reply?.status)).toEqual([429, 429, 200, 200, 429, 429]);
  });

  it("answers side requests (title generation) with JSON text and marks them", async () => {
    const side = {
      model: "claude-haiku",
      max_tokens: 100,
      stream: true,
      tools: [],
      output_config: {
        format: {
          type: "json_schema",
          schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
        },
      },
      messages: [{ role: "user", content: "MOCK_ERROR:500" }],
    };
    api.setNextReply({ text: "not for side requests" });
    const blocks = assemble(parseSse(await (await post(api, side)).text()));
    expect(blocks).toHaveLength(1);
    expect(JSON.parse(blocks[0].text)).toEqual({ title: "Mock session" });
    expect(api.requests[0]!.isSideRequest).toBe(true);
    expect(api.mainRequests()).toHaveLength(0);
    const nonStream: any = await (await post(api, { ...side, stream: false })).json();
    expect(JSON.parse(nonStream.content[0].text)).toEqual({ title: "Mock session" });
    // the queued reply is still there for the next main request
    expect(assemble(parseSse(await (await post(api, userBody("x"))).text()))).toEqual([
      { type: "text", text: "not for side requests" },
    ]);
  });

  it("lets a test script replies with setNextReply and a handler", async () => {
    await api.close();
    api = await startMockApi({
      handler: (req) => (req.lastUserText === "scripted?" ? { text: "from handler" } : undefined),
    });
    api.setNextReply((req) => ({ blocks: [{ type: "tool_use", name: "Read", input: { file_path: `/${req.lastUserText}` } }] }));
    const first = assemble(parseSse(await (await post(api, userBody("scripted?"))).text()));
    expect(first[0]).toMatchObject({ type: "tool_use", name: "Read", input: { file_path: "/scripted?" } });
    const second = assemble(parseSse(await (await post(api, userBody("scripted?"))).text()));
    expect(second).toEqual([{ type: "text", text: "from handler" }]);
    const third = assemble(parseSse(await (await post(api, userBody("plain"))).text()));
    expect(third).toEqual([{ type: "text", text: "MOCK REPLY: plain" }]);
    api.setNextReply({ error: { status: 529, type: "overloaded_error", message: "busy" } });
    const res = await post(api, userBody("plain"));
    expect(res.status).toBe(529);
    expect(await res.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "busy" } });
  });

  it("holds a slow reply open after ping and aborts cleanly when the client goes away", async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    const res = await post(api, userBody("MOCK_SLOW:30"), { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = "";
    while (!got.includes("event: ping")) {
      const { value, done } = await reader.read();
      if (done) break;
      got += new TextDecoder().decode(value);
    }
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(parseSse(got).map((e) => e.event)).toEqual(["message_start", "ping"]);
    expect(api.requests[0]!.outcome).toBe("pending");
    ac.abort();
    await reader.cancel().catch(() => {});
    await until(() => api.requests[0]!.outcome !== "pending", 3000, 20);
    expect(api.requests[0]!.outcome).toBe("aborted");
    // the server keeps working
    const ok = assemble(parseSse(await (await post(api, userBody("after"))).text()));
    expect(ok).toEqual([{ type: "text", text: "MOCK REPLY: after" }]);
  });

  it("finishes a short slow reply with the default text", async () => {
    const t0 = Date.now();
    const events = parseSse(await (await post(api, userBody("MOCK_SLOW:0.3"))).text());
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    expect(assemble(events)).toEqual([{ type: "text", text: "MOCK REPLY: MOCK_SLOW:0.3" }]);
  });

  it("records and refuses stray requests, including proxy CONNECT attempts", async () => {
    const models = await fetch(`${api.url}/v1/models`);
    expect(models.status).toBe(404);
    await models.text();
    const count = await fetch(`${api.url}/v1/messages/count_tokens`, { method: "POST", body: "{}" });
    expect(count.status).toBe(404);
    await count.text();
    const getMessages = await fetch(`${api.url}/v1/messages`);
    expect(getMessages.status).toBe(404);
    await getMessages.text();

    const connectStatus = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: api.port, method: "CONNECT", path: "api.anthropic.com:443" });
      req.on("connect", (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on("response", (res) => resolve(res.statusCode ?? 0));
      req.on("error", reject);
      req.end();
    });
    expect(connectStatus).toBe(403);

    const proxied = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: api.port, method: "GET", path: "http://statsig.example.com/v1/x" });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(proxied).toBe(403);

    expect(api.stray.map((s) => [s.kind, s.method, s.url])).toEqual([
      ["http", "GET", "/v1/models"],
      ["http", "POST", "/v1/messages/count_tokens"],
      ["http", "GET", "/v1/messages"],
      ["connect", "CONNECT", "api.anthropic.com:443"],
      ["proxy", "GET", "http://statsig.example.com/v1/x"],
    ]);
    expect(api.requests).toHaveLength(0);
  });

  it("waitForRequest resolves for past and future requests", async () => {
    await (await post(api, userBody("one"))).text();
    expect((await api.waitForRequest((r) => r.lastUserText === "one")).seq).toBe(1);
    const later = api.waitForRequest((r) => r.lastUserText === "two", 5000);
    await (await post(api, userBody("two"))).text();
    expect((await later).seq).toBe(2);
    await expect(api.waitForRequest((r) => r.lastUserText === "never", 50)).rejects.toThrow(/no matching request/);
  });

  it("answers invalid JSON with 400 and records it", async () => {
    const res = await fetch(`${api.url}/v1/messages`, { method: "POST", body: "{nope" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.type).toBe("invalid_request_error");
    expect(api.requests[0]!.parseError).toBeTruthy();
  });
});
