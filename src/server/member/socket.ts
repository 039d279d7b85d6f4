/**
 * The Unix socket member servers reach this server on: `<state>/sockets/<pid>.sock` (the folder 0700, the socket
 * 0600). One per server process: sessions outlive servers and many servers share a state directory, and a pty or
 * headless session can only be driven by the server that runs it, so a member first tries the socket of the server
 * that launched it (CLAUDE_SESSIONS_MEMBER_SOCKET) and then any other live one (a tmux session whose server was
 * restarted). Each connection carries JSON lines: a request (sessions/teams/members.ts authenticates it), its answer.
 * Sockets of servers that are gone are removed at start.
 */
import { chmod, mkdir, readdir, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { socketDir, socketPath } from "../../sessions/teams/members.js";
import type { SessionService } from "../../sessions/service.js";
import type { Logger } from "../../util/log.js";
import { isAlive } from "../../util/proc/process.js";
import { serverInfo } from "../info.js";
import { handleMember } from "./handler.js";

/** A request line longer than this closes the connection (a message is at most 100,000 characters). */
const MAX_LINE = 512 * 1024;
/** Unix socket paths are limited to 107 bytes on Linux. */
const MAX_PATH = 107;

export interface MemberSocket {
  path: string;
  close(): Promise<void>;
}

async function removeStale(dir: string): Promise<void> {
  for (const f of await readdir(dir).catch(() => [] as string[])) {
    const pid = /^(\d+)\.sock$/.exec(f)?.[1];
    if (pid && Number(pid) !== process.pid && !isAlive(Number(pid))) await rm(join(dir, f), { force: true });
  }
}

function serve(svc: SessionService, log: Logger, sock: Socket, open: Set<Socket>): void {
  open.add(sock);
  sock.on("close", () => open.delete(sock));
  let buf = "";
  const ac = new AbortController();
  sock.setEncoding("utf8");
  sock.on("error", () => {});
  // The member gave up (its call was cancelled, its process ended): the call is cancelled too.
  sock.on("close", () => ac.abort());
  sock.on("data", (chunk: string) => {
    buf += chunk;
    if (buf.length > MAX_LINE) {
      sock.destroy();
      return;
    }
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch {
        raw = undefined;
      }
      void handleMember(svc, raw, { signal: ac.signal })
        .then((res) => {
          if (!sock.destroyed) sock.write(JSON.stringify(res) + "\n");
        })
        .catch((e: unknown) => log.warn(`member call failed: ${String(e)}`));
    }
  });
}

/** Listens on this process's member socket; undefined (logged) when it cannot (a state path too long for a socket). */
export async function startMemberSocket(svc: SessionService, log: Logger): Promise<MemberSocket | undefined> {
  const stateDir = svc.deps.cfg.stateDir;
  const dir = socketDir(stateDir);
  const path = socketPath(stateDir);
  // health_check reports this path and whether it answers, also when listening fails below.
  serverInfo.memberSocket = path;
  if (Buffer.byteLength(path) > MAX_PATH) {
    log.warn(
      `member socket not started: ${path} is longer than a Unix socket path may be; team members cannot reach this server`,
    );
    return undefined;
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  await removeStale(dir);
  await rm(path, { force: true });
  const open = new Set<Socket>();
  const server: Server = createServer((sock) => serve(svc, log, sock, open));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(path, 0o600);
  server.unref();
  log.info(`member socket ${path}`);
  return {
    path,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of open) s.destroy();
      await closed;
      await rm(path, { force: true });
    },
  };
}
