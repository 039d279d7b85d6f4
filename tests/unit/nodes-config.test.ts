/** nodes.json is the operator's: validated strictly, refused when others could write it; attach_command through a node. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { displayWord, remoteAttach, splitQuoted } from "../../src/nodes/attach.js";
import { loadNodes, parseNodes } from "../../src/nodes/config.js";
import { capacityOf } from "../../src/nodes/coordinator.js";

const dir = mkdtempSync(join(tmpdir(), "cs-nodes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("nodes.json", () => {
  it("reads names, exec and attach", () => {
    const n = parseNodes(JSON.stringify({ nodes: { build1: { exec: ["ssh", "-o", "BatchMode=yes", "me@build1", "--", "claude-sessions"], attach: ["ssh", "-t", "me@build1", "--"] }, "pod-a": { exec: ["kubectl", "exec", "-i", "agents-0", "--", "claude-sessions"] } } }), "f");
    expect(n).toEqual([
      { name: "build1", exec: ["ssh", "-o", "BatchMode=yes", "me@build1", "--", "claude-sessions"], attach: ["ssh", "-t", "me@build1", "--"] },
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
  ])("refuses %s", (_what, text, why) => {
    expect(() => parseNodes(text, "/etc/nodes.json")).toThrow(why);
    expect(() => parseNodes(text, "/etc/nodes.json")).toThrow(/\/etc\/nodes\.json/);
  });

  it("no file at the default place is no nodes; a named file must exist; a file others can write is refused", async () => {
    expect(await loadNodes({}, dir)).toEqual([]);
    await expect(loadNodes({ CLAUDE_SESSIONS_NODES: join(dir, "missing.json") }, dir)).rejects.toThrow(/missing\.json cannot be read/);
    const p = join(dir, "nodes.json");
    writeFileSync(p, JSON.stringify({ nodes: { a: { exec: ["true"] } } }));
    chmodSync(p, 0o620);
    await expect(loadNodes({}, dir)).rejects.toThrow(/cannot be trusted.*chmod 600/);
    chmodSync(p, 0o600);
    expect((await loadNodes({}, dir)).map((n) => n.name)).toEqual(["a"]);
  });
});

describe("attach_command through a node", () => {
  it("splits the node's tmux attach back into words and puts the node's prefix before it", () => {
    expect(splitQuoted("tmux -L 'cs-node' attach -t =cs-abc")).toEqual(["tmux", "-L", "cs-node", "attach", "-t", "=cs-abc"]);
    expect(splitQuoted("tmux -S '/tmp/a b/it'\\''s' attach -t =cs-x")).toEqual(["tmux", "-S", "/tmp/a b/it's", "attach", "-t", "=cs-x"]);
    expect(splitQuoted("tmux attach; rm -rf /")).toBeUndefined();
    expect(remoteAttach(["ssh", "-t", "me@build1", "--"], "tmux -L 'cs-node' attach -t =cs-abc")).toBe("ssh -t me@build1 -- tmux -L cs-node attach -t =cs-abc");
    expect(remoteAttach(undefined, "tmux attach -t =cs-abc")).toBeUndefined();
    expect(displayWord("a b")).toBe("'a b'");
    expect(displayWord("it's")).toBe("'it'\\''s'");
  });
});

describe("node auto", () => {
  it("reads free slots and memory from a node's health_check", () => {
    const h = { checks: [{ name: "sessions", detail: "3 live of 10 (MAX_CONCURRENT_SESSIONS)" }, { name: "memory", detail: "2048 MiB available of 8000 MiB" }] };
    expect(capacityOf(h)).toEqual({ free: 7, mem: 2048 });
    expect(capacityOf({ checks: [] })).toBeUndefined();
  });
});
