/** nodes.json is the operator's: validated strictly, refused when others could write it; attach_command through a node. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { displayWord, remoteAttach, remoteAttachArgv, splitQuoted, tmuxAttachOf } from "../../src/nodes/attach.js";
import { loadNodes, parseNodes } from "../../src/nodes/config.js";
import { z } from "zod";
import { checkNotice, checkResult } from "../../src/nodes/checks.js";
import { capacityOf, NODE_MEM_MAX_MIB, NODE_SLOTS_MAX, verifiedCapacity } from "../../src/nodes/coordinator.js";
import { hasRoom, mostRoom, verifiedRoom } from "../../src/nodes/room.js";
import { nodeExecEnv } from "../../src/nodes/exec-env.js";
import { Bucket } from "../../src/nodes/rate.js";

const dir = mkdtempSync(join(tmpdir(), "cs-nodes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("nodes.json", () => {
  it("reads names, exec and attach", () => {
    const n = parseNodes(
      JSON.stringify({
        nodes: {
          build1: {
            exec: ["ssh", "-o", "BatchMode=yes", "me@build1", "--", "claude-sessions"],
            attach: ["ssh", "-t", "me@build1", "--"],
          },
          "pod-a": { exec: ["kubectl", "exec", "-i", "agents-0", "--", "claude-sessions"] },
        },
      }),
      "f",
    );
    expect(n).toEqual([
      {
        name: "build1",
        exec: ["ssh", "-o", "BatchMode=yes", "me@build1", "--", "claude-sessions"],
        attach: ["ssh", "-t", "me@build1", "--"],
      },
      { name: "pod-a", exec: ["kubectl", "exec", "-i", "agents-0", "--", "claude-sessions"] },
    ]);
  });

  it.each([
    ["not JSON", "{nodes", /not valid JSON/],
    ["no nodes key", "{}", /nodes/],
    ["an unknown key", JSON.stringify({ nodes: {}, extra: 1 }), /extra|Unrecognized/i],
    ["an empty exec", JSON.stringify({ nodes: { a: { exec: [] } } }), /nodes\.a\.exec/],
    ["exec as a string (a shell line)", JSON.stringify({ nodes: { a: { exec: "ssh host claude-sessions" } } }), /nodes\.a\.exec/],
    ["a non-string argument", JSON.stringify({ nodes: { a: { exec: ["ssh", 1] } } }), /nodes\.a\.exec\.1/],
    ["a line break in an argument", JSON.stringify({ nodes: { a: { exec: ["ssh", "a\nb"] } } }), /line breaks/],
    ["a name with a space", JSON.stringify({ nodes: { "a b": { exec: ["x"] } } }), /node name/],
    ["an uppercase name", JSON.stringify({ nodes: { Build: { exec: ["x"] } } }), /node name/],
    ["the reserved name local", JSON.stringify({ nodes: { local: { exec: ["x"] } } }), /not node names/],
    ["the reserved name auto", JSON.stringify({ nodes: { auto: { exec: ["x"] } } }), /not node names/],
    ["an unknown field of a node", JSON.stringify({ nodes: { a: { exec: ["x"], shell: true } } }), /shell|Unrecognized/i],
    ["neither exec nor url", JSON.stringify({ nodes: { a: { attach: ["x"] } } }), /either "exec".*or "url"/],
    ["both exec and url", JSON.stringify({ nodes: { a: { exec: ["x"], url: "http://h:1/mcp", token_file: "/t" } } }), /not both/],
    ["a url without a token file", JSON.stringify({ nodes: { a: { url: "http://h:1/mcp" } } }), /needs one/],
    ["a token file without a url", JSON.stringify({ nodes: { a: { exec: ["x"], token_file: "/t" } } }), /goes with "url"/],
    [
      "a url with a password in it",
      JSON.stringify({ nodes: { a: { url: "http://u:p@h:1/mcp", token_file: "/t" } } }),
      /nodes\.a\.url/,
    ],
    [
      "a url that is not http",
      JSON.stringify({ nodes: { a: { url: "file:///etc/passwd", token_file: "/t" } } }),
      /nodes\.a\.url/,
    ],
    [
      "a relative token file",
      JSON.stringify({ nodes: { a: { url: "https://h/mcp", token_file: "token" } } }),
      /nodes\.a\.token_file/,
    ],
  ])("refuses %s", (_what, text, why) => {
    expect(() => parseNodes(text, "/etc/nodes.json")).toThrow(why);
    expect(() => parseNodes(text, "/etc/nodes.json")).toThrow(/\/etc\/nodes\.json/);
  });

  it("reads a node reached at its serve --http URL with a token file", () => {
    const n = parseNodes(
      JSON.stringify({ nodes: { web: { url: "https://build1:7777/mcp", token_file: "/etc/cs/build1.token" } } }),
      "f",
    );
    expect(n).toEqual([{ name: "web", url: "https://build1:7777/mcp", token_file: "/etc/cs/build1.token" }]);
  });

  it("no file at the default place is no nodes; a named file must exist; a file others can write is refused", async () => {
    expect(await loadNodes(undefined, dir)).toEqual([]);
    await expect(loadNodes(join(dir, "missing.json"), dir)).rejects.toThrow(/missing\.json cannot be read/);
    const p = join(dir, "nodes.json");
    writeFileSync(p, JSON.stringify({ nodes: { a: { exec: ["true"] } } }));
    chmodSync(p, 0o620);
    await expect(loadNodes(undefined, dir)).rejects.toThrow(/cannot be trusted.*chmod 600/);
    chmodSync(p, 0o600);
    expect((await loadNodes(undefined, dir)).map((n) => n.name)).toEqual(["a"]);
  });
});

describe("attach_command through a node", () => {
  it("splits the node's tmux attach back into words and puts the node's prefix before it", () => {
    expect(splitQuoted("tmux -L 'cs-node' attach -t =cs-abc")).toEqual(["tmux", "-L", "cs-node", "attach", "-t", "=cs-abc"]);
    expect(splitQuoted("tmux -S '/tmp/a b/it'\\''s' attach -t =cs-x")).toEqual([
      "tmux",
      "-S",
      "/tmp/a b/it's",
      "attach",
      "-t",
      "=cs-x",
    ]);
    expect(splitQuoted("tmux attach; rm -rf /")).toBeUndefined();
    expect(remoteAttach(["ssh", "-t", "me@build1", "--"], "tmux -L 'cs-node' attach -t =cs-abc", "abc")).toBe(
      "ssh -t me@build1 -- tmux -L cs-node attach -t =cs-abc",
    );
    expect(remoteAttach(["ssh", "-t", "me@build1", "--"], "tmux attach -t =cs-abc", "abc")).toBe(
      "ssh -t me@build1 -- tmux attach -t =cs-abc",
    );
    expect(remoteAttach(undefined, "tmux attach -t =cs-abc", "abc")).toBeUndefined();
    expect(displayWord("a b")).toBe("'a b'");
    expect(displayWord("it's")).toBe("'it'\\''s'");
  });
});

describe("a node's attach line is rebuilt, never spliced", () => {
  it.each([
    ["an option as the socket", "tmux -L '-oProxyCommand=touch /tmp/x' attach -t =cs-abc"],
    ["an option as the first word", "-oProxyCommand=x attach -t =cs-abc"],
    ["another program", "sh -c id"],
    ["another session's tmux session", "tmux -L s attach -t =cs-other"],
    ["a prefix match of the session", "tmux -L s attach -t cs-abc"],
    ["more words", "tmux -L s attach -t =cs-abc -x"],
    ["a socket that is not a plain word", "tmux -S '/tmp/a b' attach -t =cs-abc"],
    ["shell syntax", "tmux attach -t =cs-abc; id"],
  ])("refuses %s", (_what, line) => {
    expect(tmuxAttachOf(line, "abc")).toBeUndefined();
    expect(remoteAttachArgv(["kubectl", "exec", "-it", "pod", "--"], line, "abc")).toBeUndefined();
  });

  it("keeps the node's socket and rebuilds the rest", () => {
    expect(remoteAttachArgv(["docker", "exec", "-it", "box"], "tmux -S '/run/cs/tmux.sock' attach -t =cs-abc", "abc")).toEqual([
      "docker",
      "exec",
      "-it",
      "box",
      "tmux",
      "-S",
      "/run/cs/tmux.sock",
      "attach",
      "-t",
      "=cs-abc",
    ]);
    expect(tmuxAttachOf("tmux attach -t =cs-abc", "../x")).toBeUndefined();
  });

  it('an ssh prefix must end with "--"; others need not', () => {
    const file = (attach: string[]) => JSON.stringify({ nodes: { a: { exec: ["ssh", "h", "--", "claude-sessions"], attach } } });
    expect(() => parseNodes(file(["ssh", "-t", "h"]), "f")).toThrow(/nodes\.a\.attach: an ssh "attach" prefix ends with "--"/);
    expect(() => parseNodes(file(["/usr/bin/ssh", "-t", "h"]), "f")).toThrow(/ends with "--"/);
    expect(parseNodes(file(["ssh", "-t", "h", "--"]), "f")[0]!.attach).toEqual(["ssh", "-t", "h", "--"]);
    expect(parseNodes(file(["docker", "exec", "-it", "box"]), "f")[0]!.attach).toEqual(["docker", "exec", "-it", "box"]);
  });
});

describe("node auto", () => {
  it("reads free slots and memory from a node's health_check", () => {
    const h = {
      checks: [
        { name: "sessions", detail: "3 live of 10 (MAX_CONCURRENT_SESSIONS)" },
        { name: "memory", detail: "2048 MiB available of 8000 MiB" },
      ],
    };
    expect(capacityOf(h)).toEqual({ free: 7, mem: 2048, live: 3, max: 10 });
    expect(capacityOf({ checks: [] })).toBeUndefined();
    expect(capacityOf({ checks: "not a list" })).toBeUndefined();
  });

  it("checks a node's claim against the live sessions seen on it, and caps its slots and memory", () => {
    const say = (live: number, max: number, mem: number) => ({
      checks: [
        { name: "sessions", detail: `${live} live of ${max}` },
        { name: "memory", detail: `${mem} MiB available` },
      ],
    });
    expect(verifiedCapacity(say(3, 10, 2048), 1)).toEqual({ free: 7, mem: 2048 });
    expect(verifiedCapacity(say(0, 5, 2048), 5)).toEqual({ free: 0, mem: 2048 });
    expect(verifiedCapacity(say(0, 1_000_000, 999_999_999_999), 0)).toEqual({ free: NODE_SLOTS_MAX, mem: NODE_MEM_MAX_MIB });
  });

  it("reads a node's CLAUDE_SESSIONS_MAX_LIVE, checked and capped, and places by room under it, then by the fewest live", () => {
    const h = (detail: string) => ({ checks: [{ name: "sessions", detail }] });
    expect(capacityOf(h("2 live of 10 (MAX_CONCURRENT_SESSIONS); CLAUDE_SESSIONS_MAX_LIVE 4"))).toMatchObject({
      live: 2,
      maxLive: 4,
    });
    expect(capacityOf(h("2 live of 10 (MAX_CONCURRENT_SESSIONS)"))!.maxLive).toBeUndefined();
    expect(verifiedRoom("n", h("0 live of 10; CLAUDE_SESSIONS_MAX_LIVE 4"), 3)).toEqual({
      name: "n",
      live: 3,
      max: 10,
      maxLive: 4,
    });
    expect(verifiedRoom("n", h("0 live of 999999; CLAUDE_SESSIONS_MAX_LIVE 999999"), 0)).toEqual({
      name: "n",
      live: 0,
      max: NODE_SLOTS_MAX,
      maxLive: NODE_SLOTS_MAX,
    });
    const room = (name: string, live: number, max: number, maxLive: number) => ({ name, live, max, maxLive });
    expect(hasRoom(room("x", 1, 10, 0))).toBe(true);
    expect(hasRoom(room("x", 2, 10, 2))).toBe(false);
    expect(hasRoom(room("x", 3, 3, 0))).toBe(false);
    // Room under MAX_LIVE first (free slots do not count), then the fewest live, the first listed on a tie.
    const rooms = [room("local", 1, 10, 1), room("a", 3, 10, 8), room("b", 1, 3, 2), room("c", 1, 10, 0)];
    expect(mostRoom(rooms)?.name).toBe("b");
    expect(mostRoom(rooms, "b")?.name).toBe("c");
    expect(mostRoom([room("local", 1, 10, 1), room("a", 2, 10, 2)])).toBeUndefined();
  });
});

describe("what a node sends", () => {
  it("notices: only this server's shape passes, unknown fields left out, at most 64 KiB", () => {
    expect(checkNotice({ event: "turn_ended", session_id: "a1", status: "idle", evil: 1 })).toEqual({
      event: "turn_ended",
      session_id: "a1",
      status: "idle",
    });
    for (const bad of [
      { event: "turn_ended", session_id: "../..", status: "idle" },
      { event: "x", session_id: "a1", status: "idle" },
      { event: "turn_ended", session_id: "a1", status: "sleeping" },
      "text",
      null,
      [1],
    ])
      expect(checkNotice(bad), JSON.stringify(bad)).toBeUndefined();
    expect(
      checkNotice({
        event: "permission",
        session_id: "a1",
        status: "waiting_for_permission",
        tool_input: { c: "x".repeat(70_000) },
      }),
    ).toBeUndefined();
  });

  it("results: bad rows dropped and counted, a bad whole or a bad session_id refused, naming the node", () => {
    const tool = {
      name: "t",
      output: z.strictObject({ rows: z.array(z.strictObject({ session_id: z.string(), n: z.number() })), total: z.number() }),
    };
    const c = checkResult("n1", tool, {
      rows: [
        { session_id: "a", n: 1 },
        { session_id: "../..", n: 2 },
        { session_id: "b", n: "x" },
      ],
      total: 3,
    });
    expect(c.value.rows).toEqual([{ session_id: "a", n: 1 }]);
    expect(c.dropped).toBe(2);
    expect(c.why).toContain('session_id "../.." is not a session id');
    expect(() => checkResult("n1", tool, { rows: [], total: "3" })).toThrow(
      /node n1 answered t with a result that is not one \(total:/,
    );
    expect(() => checkResult("n1", { name: "s", output: z.object({ session_id: z.string() }) }, { session_id: "__x/y" })).toThrow(
      /not a session id/,
    );
    expect(() => checkResult("n1", tool, [1])).toThrow(/not an object/);
  });

  it("a token bucket per node: a burst, then the rate; the rest counted", () => {
    let now = 0;
    const b = new Bucket(20, 100, () => now);
    let passed = 0;
    for (let i = 0; i < 1000; i++) if (b.take()) passed++;
    expect(passed).toBe(100);
    expect(b.takeDropped()).toBe(900);
    now = 1000;
    passed = 0;
    for (let i = 0; i < 1000; i++) if (b.take()) passed++;
    expect(passed).toBe(20);
  });

  it("the exec command's environment: what ssh, kubectl and docker need, nothing else", () => {
    const env = {
      PATH: "/bin",
      HOME: "/h",
      USER: "u",
      SSH_AUTH_SOCK: "/s",
      LANG: "C",
      LC_ALL: "C",
      KUBECONFIG: "/k",
      DOPPLER_TOKEN: "d",
      ANTHROPIC_API_KEY: "k",
      CLAUDE_SESSIONS_TOKEN: "t",
      LC_EVIL_1: "x",
    };
    expect(nodeExecEnv(env)).toEqual({
      PATH: "/bin",
      HOME: "/h",
      USER: "u",
      SSH_AUTH_SOCK: "/s",
      LANG: "C",
      LC_ALL: "C",
      KUBECONFIG: "/k",
    });
  });
});
