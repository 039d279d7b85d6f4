/**
 * A sandboxed team session's relay (sandbox/member-relay.ts), with real Unix sockets: the launcher's relay socket is
 * 0600 and passes a connection to the launching server's socket, or, when that one is gone (the server restarted),
 * to another live server socket of the same folder.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { memberRelay, socketCandidates } from "../../src/sandbox/member-relay.js";

const root = mkdtempSync(join(tmpdir(), "cs-relay-"));
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
  rmSync(root, { recursive: true, force: true });
});

/** A server socket that answers each line with its name and the line. */
function answering(path: string, name: string): Promise<void> {
  const s = createServer((c) => c.on("data", (d) => c.write(`${name}:${String(d)}`)));
  servers.push(s);
  return new Promise((r) => s.listen(path, r));
}

function ask(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(path);
    c.on("error", reject);
    c.on("connect", () => c.write(line));
    c.on("data", (d) => {
      resolve(String(d));
      c.destroy();
    });
  });
}

describe("the member relay", () => {
  it("forwards to the launching server's socket, and to another live one once that is gone", async () => {
    const sockets = join(root, "sockets");
    mkdirSync(sockets);
    const first = join(sockets, "111.sock");
    const second = join(sockets, "222.sock");
    await answering(first, "first");
    await answering(second, "second");
    const relay = join(root, "member-relay.sock");
    const r = await memberRelay(relay, first);
    servers.push(r);
    expect(statSync(relay).mode & 0o777).toBe(0o600);
    expect(await ask(relay, "hello\n")).toBe("first:hello\n");
    expect(socketCandidates(first)).toEqual([first, second]);
    await new Promise((res) => servers[0]!.close(res));
    expect(await ask(relay, "again\n")).toBe("second:again\n");
  });
});
