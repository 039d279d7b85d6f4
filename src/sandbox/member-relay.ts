/**
 * A sandboxed team session's way to the server (issue 32): its member server runs inside the sandbox, whose seccomp
 * filter forbids every Unix socket, and whose network is its own. So the launcher (outside) listens on one socket of
 * the session's own folder, `member-relay.sock`, and passes each connection on to a server of the state directory
 * (the one that launched the session first, then any other live one: a tmux session outlives its server). Inside, a
 * relay started before the filter (member-relay.sh, in the runtime's place for apply-seccomp) listens on
 * 127.0.0.1:MEMBER_PORT of the sandbox's own network and connects to that one socket: nothing else is opened.
 */
import { chmodSync, readdirSync, rmSync, statSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The relay's TCP port in the sandbox's own network namespace (the runtime's proxies take 3128 and 1080). */
export const MEMBER_PORT = 3129;
/** The launcher's socket in the session's folder, the only one the sandbox may reach. */
export const RELAY_SOCKET = "member-relay.sock";
/** The script the runtime runs in place of apply-seccomp for a team session (dist/sandbox, beside this module). */
export const RELAY_SCRIPT = fileURLToPath(new URL("./member-relay.sh", import.meta.url));

/** The sockets to try: the launching server's first, then the others of its folder, newest first. */
export function socketCandidates(first: string | undefined): string[] {
  if (!first) return [];
  const dir = dirname(first);
  const others = (() => {
    try {
      return readdirSync(dir)
        .filter((f) => /^\d+\.sock$/.test(f))
        .map((f) => join(dir, f))
        .filter((p) => p !== first)
        .map((p) => ({ p, t: statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
        .sort((a, b) => b.t - a.t)
        .map((x) => x.p);
    } catch {
      return [];
    }
  })();
  return [first, ...others];
}

/** The first candidate that accepts a connection, or undefined. */
async function reach(candidates: string[]): Promise<Socket | undefined> {
  for (const path of candidates) {
    const s = await new Promise<Socket | undefined>((resolve) => {
      const c = connect(path);
      c.once("connect", () => resolve(c));
      c.once("error", () => resolve(undefined));
    });
    if (s) return s;
  }
  return undefined;
}

/** Listens on `listenPath` (0600) and pipes each connection to a live server socket (`serverSocket` first). */
export async function memberRelay(listenPath: string, serverSocket: string): Promise<Server> {
  rmSync(listenPath, { force: true });
  const srv = createServer((inner) => {
    inner.pause();
    inner.on("error", () => inner.destroy());
    void reach(socketCandidates(serverSocket)).then((outer) => {
      if (!outer) return void inner.destroy();
      outer.on("error", () => inner.destroy());
      inner.on("close", () => outer.destroy());
      outer.on("close", () => inner.destroy());
      inner.pipe(outer);
      outer.pipe(inner);
      inner.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(listenPath, () => resolve());
  });
  // The session's folder is the server's user's alone (0700) already; the socket is too.
  chmodSync(listenPath, 0o600);
  // The launcher ends with its session: the relay never keeps it alive.
  srv.unref();
  return srv;
}

/** The runtime's own apply-seccomp for this machine (the relay script runs it once its relay listens). */
export function applySeccompPath(runtimeEntry: string): string {
  const arch = process.arch === "x64" ? "x64" : process.arch === "arm64" ? "arm64" : process.arch;
  return join(dirname(runtimeEntry), "..", "vendor", "seccomp", arch, "apply-seccomp");
}
