/**
 * The history tools on a coordinator, no root needed: a "node" is the built server with a world of its own (its own
 * HOME, transcripts and index), reached through `env`; a second node's command fails. Conversations of both
 * machines are listed in one newest-first order (paged exactly with the merged cursor), searched, and read by id
 * wherever they are; the failing node is named, never failing a call; nothing of the node's is indexed here.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, makeWorld, tmuxOrSkip, until, type Mcp, type World } from "../helpers/harness.js";
import { loopbackExec, writeNodesFile } from "../helpers/test-hosts.mjs";
import { Transcript } from "../helpers/transcripts.js";

describe.skipIf(!tmuxOrSkip())("history across nodes", () => {
  let here: World;
  let far: World;
  let m: Mcp;
  /** Expected merged order (newest first): "<node>/<claude_session_id>". */
  const order: string[] = [];

  beforeAll(async () => {
    here = makeWorld();
    far = makeWorld();
    // Six conversations an hour apart, alternating machines: the merged list interleaves them.
    const made: Array<{ key: string; at: number }> = [];
    for (let i = 0; i < 6; i++) {
      const onFar = i % 2 === 1;
      const w = onFar ? far : here;
      const t = new Transcript(
        join(w.home, ".claude"),
        `/w/p${i}`,
        undefined,
        new Date(Date.parse("2026-03-01T10:00:00Z") + i * 3_600_000).toISOString(),
      );
      t.turn(`alpha question ${onFar ? "far" : "here"} ${i}`, `answer ${i}`, {
        model: "claude-opus-4-6",
        usage: { input_tokens: 10, output_tokens: 5 },
      });
      made.push({ key: `${onFar ? "far" : "local"}/${t.sessionId}`, at: i });
    }
    order.push(...made.sort((a, b) => b.at - a.at).map((x) => x.key));
    here.env.CLAUDE_SESSIONS_NODES = writeNodesFile(here.root, {
      far: { exec: loopbackExec(far.env) },
      gone: { exec: ["sh", "-c", "echo 'ssh: connect to host gone port 22: No route to host' >&2; exit 255"] },
    });
    m = await connect(here);
  });

  afterAll(async () => {
    await m?.close().catch(() => {});
    here?.cleanup();
    far?.cleanup();
  });

  const keys = (rows: Array<{ node?: string; claude_session_id: string }>) =>
    rows.map((r) => `${r.node ?? "local"}/${r.claude_session_id}`);

  it("list_conversations: both machines' in one newest-first order, the failing node named", async () => {
    const l = await until(
      async () => {
        const r = await m.callOk("list_conversations", {});
        return r.conversations.length === 6 && !r.indexing ? r : undefined;
      },
      20_000,
      200,
    );
    expect(keys(l.conversations)).toEqual(order);
    expect(l.total).toBe(6);
    expect(l.next_cursor).toBeNull();
    expect(l.nodes![0]).toEqual({ name: "far", status: "reachable" });
    expect(l.nodes![1]).toMatchObject({
      name: "gone",
      status: expect.stringMatching(/^(unreachable|connecting)$/),
      error: expect.stringContaining("No route to host"),
    });
  });

  it("paging with the merged cursor gives the same rows in the same order, whatever the page size", async () => {
    for (const limit of [1, 2, 4, 5]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const p = await m.callOk("list_conversations", { limit, ...(cursor ? { cursor } : {}) });
        expect(p.conversations.length).toBeLessThanOrEqual(limit);
        seen.push(...keys(p.conversations));
        cursor = p.next_cursor ?? undefined;
        pages++;
      } while (cursor && pages < 10);
      expect(seen, `limit ${limit}`).toEqual(order);
      expect(pages).toBe(Math.ceil(6 / limit));
    }
    // A cursor this coordinator did not make is refused, typed.
    const bad = await m.call("list_conversations", { cursor: "bm90IGEgY3Vyc29y" });
    expect(bad.error?.code).toBe("INVALID_ARGUMENT");
  });

  it("search_conversations: hits from both machines, the node's marked; limit cuts the merged hits", async () => {
    const s = await m.callOk("search_conversations", { query: "alpha question" });
    expect(s.results).toHaveLength(6);
    expect(
      s.results
        .filter((r) => r.node === "far")
        .map((r) => r.snippet)
        .sort(),
    ).toEqual([1, 3, 5].map((i) => `**alpha** **question** far ${i}`));
    expect(s.nodes!.map((n) => n.name)).toEqual(["far", "gone"]);
    const two = await m.callOk("search_conversations", { query: "alpha", limit: 2 });
    expect(two.results).toHaveLength(2);
    expect(two.more_matches).toBe(true);
    const farOnly = await m.callOk("search_conversations", { query: "far" });
    expect(farOnly.results.map((r) => r.node)).toEqual(["far", "far", "far"]);
  });

  it("get_conversation: found on its node by id alone or with node; never in this machine's index", async () => {
    const id = order[0]!.split("/")[1]!;
    expect(order[0]!.startsWith("far/")).toBe(true);
    for (const args of [{ claude_session_id: id }, { claude_session_id: id, node: "far" }]) {
      const c = await m.callOk("get_conversation", args);
      expect(c.conversation).toMatchObject({ claude_session_id: id, node: "far", cwd: "/w/p5" });
      expect(c.items.map((i) => i.text)).toEqual(["alpha question far 5", "answer 5"]);
    }
    expect((await m.call("get_conversation", { claude_session_id: id, node: "local" })).error?.code).toBe("SESSION_NOT_FOUND");
    expect((await m.call("get_conversation", { claude_session_id: id, node: "nope" })).error?.code).toBe("INVALID_ARGUMENT");
    // This machine's own conversation is read here, unmarked.
    const mine = order[1]!.split("/")[1]!;
    expect((await m.callOk("get_conversation", { claude_session_id: mine })).conversation.node).toBeUndefined();
    // An id no machine that answers has, while a node does not answer: it may be there (retryable), not "not found".
    const unknown = await m.call("get_conversation", { claude_session_id: "00000000-0000-0000-0000-000000000000" });
    expect(unknown.error?.code).toBe("NODE_UNREACHABLE");
    expect(unknown.error?.message).toContain("gone");
  });
});
