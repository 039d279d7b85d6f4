/**
 * A connected server's calls held until it can answer them (cli/serve-early.ts): initialize, ping and tools/list
 * are answered by the server shell at once (mcp/shell.ts); every other message — a tool call, resources, prompts,
 * a cancellation — waits, in its order, until the sessions are ready and the rest of the server is added, then
 * reaches it as if it had just arrived; once one waits, so does everything after it. Replies to the server's own
 * requests pass (it sends none before).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** What the shell answers alone. */
const AT_ONCE = new Set(["initialize", "notifications/initialized", "ping", "tools/list"]);

/**
 * The client name of a coordinator's link to this machine (nodes/link.ts). Its initialize waits for the whole server,
 * as every message after it: the link pings at once and every second, and counts a ping unanswered for seconds as an
 * outage, while loading the rest of the server holds this thread.
 */
export const COORDINATOR_CLIENT = "claude-sessions-coordinator";

export interface Held {
  /**
   * Resolves when the rest of the server should be made: tools/list has been answered, a message waits for it, the
   * transport closed, or `idleMs` passed since connect (a client that lists nothing still gets its sessions followed
   * and its schedules run).
   */
  readonly wanted: Promise<void>;
  /** The transport closed (or stdin ended) while held: the server should end once made. */
  readonly closed: boolean;
  /** Marks the input ended (stdin's end or close, which the transport does not report). */
  end(): void;
  /** Delivers what waits, in order, and lets every later message through. */
  release(): void;
  /** release() was called: the server is complete. */
  readonly released: boolean;
}

/** Call right after `server.connect(transport)`: wraps the handlers the server set on the transport. */
export function holdCalls(transport: Transport, idleMs = 250): Held {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("holdCalls: the transport is not connected");
  const queue: Parameters<typeof deliver>[] = [];
  let open = false;
  let closed = false;
  let want!: () => void;
  const wanted = new Promise<void>((resolve) => (want = resolve));
  const timer = setTimeout(() => want(), idleMs);
  wanted.then(
    () => clearTimeout(timer),
    () => {},
  );
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    if (open) return deliver(message, extra);
    const method = "method" in message ? message.method : undefined;
    const coordinator = method === "initialize" && clientName(message) === COORDINATOR_CLIENT;
    if (method === undefined || (AT_ONCE.has(method) && !coordinator && queue.length === 0)) {
      deliver(message, extra);
      // Its answer is written a few microtasks later; the rest loads after that (loading blocks this thread).
      if (method === "tools/list") setImmediate(want);
      return;
    }
    queue.push([message, extra]);
    want();
  };
  const onclose = transport.onclose;
  transport.onclose = () => {
    closed = true;
    want();
    onclose?.();
  };
  return {
    wanted,
    get closed() {
      return closed;
    },
    end() {
      closed = true;
      want();
    },
    get released() {
      return open;
    },
    release() {
      if (open) return;
      open = true;
      for (const [m, x] of queue.splice(0)) deliver(m, x);
    },
  };
}

function clientName(m: JSONRPCMessage): unknown {
  const p = "params" in m ? (m.params as { clientInfo?: { name?: unknown } } | undefined) : undefined;
  return p?.clientInfo?.name;
}
