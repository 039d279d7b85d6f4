/**
 * MCP over stdio with a bounded message size that never ends the server. The SDK's StdioServerTransport closes
 * itself when its read buffer passes 10 MiB, and a closed transport shuts the server down — and with it every pty
 * and headless session it runs. Here a line over the limit is dropped as it streams in (never buffered whole) and
 * answered with a JSON-RPC error (`-32600`, with the request's id when its first or last bytes show it, as clients
 * write `{"jsonrpc","id",…}` or `{…,"jsonrpc","id"}`); the next line is read as usual. Everything else behaves as
 * the SDK's transport: one JSON-RPC message per line, a line that is not one goes to onerror.
 */
import process from "node:process";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The SDK's own limit (STDIO_DEFAULT_MAX_BUFFER_SIZE): larger messages than any tool takes. */
export const STDIO_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** JSON-RPC's "Invalid Request". */
const INVALID_REQUEST = -32600;
/** How much of a dropped line's start and end is kept to find its id. */
const KEEP = 512;

const ID = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`;
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}\s*[,}]`);
const ID_AT_END = new RegExp(String.raw`[{,]\s*"id"\s*:\s*${ID}\s*\}\s*$`);

/** The top-level id of a JSON-RPC message seen only by its first and last bytes, if they show it. */
export function idOfCutMessage(head: string, tail: string): string | number | undefined {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  if (!m) return undefined;
  try {
    const v: unknown = JSON.parse(m[1]!);
    return typeof v === "number" || typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

export class BoundedStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  private size = 0;
  /** The line being dropped: its first and (rolling) last bytes. */
  private dropping: { head: Buffer; tail: Buffer; bytes: number } | undefined;
  private started = false;

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly maxBytes = STDIO_MAX_MESSAGE_BYTES,
  ) {}

  private readonly ondata = (chunk: Buffer) => {
    let at = 0;
    while (at <= chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      const piece = chunk.subarray(at, nl === -1 ? chunk.length : nl);
      this.take(piece);
      if (nl === -1) return;
      this.endLine();
      at = nl + 1;
    }
  };

  private readonly onstreamerror = (e: Error) => this.onerror?.(e);

  private take(piece: Buffer): void {
    if (!piece.length) return;
    if (this.dropping) {
      this.dropping.bytes += piece.length;
      this.dropping.tail = Buffer.concat([this.dropping.tail, piece]).subarray(-KEEP);
      return;
    }
    if (this.size + piece.length <= this.maxBytes) {
      this.parts.push(piece);
      this.size += piece.length;
      return;
    }
    const all = Buffer.concat([...this.parts, piece]);
    this.dropping = { head: all.subarray(0, KEEP), tail: all.subarray(-KEEP), bytes: all.length };
    this.parts = [];
    this.size = 0;
  }

  private endLine(): void {
    const dropped = this.dropping;
    if (dropped) {
      this.dropping = undefined;
      const id = idOfCutMessage(dropped.head.toString("utf8"), dropped.tail.toString("utf8"));
      const error = {
        code: INVALID_REQUEST,
        message: `the message has more than ${this.maxBytes} bytes (this server's limit for one stdio message); it was dropped and nothing was done`,
      };
      const answered = id !== undefined ? `; answered request ${JSON.stringify(id)}` : "";
      this.onerror?.(new Error(`a stdio message of ${dropped.bytes}+ bytes was dropped (limit ${this.maxBytes})${answered}`));
      void this.send({ jsonrpc: "2.0", ...(id !== undefined ? { id } : {}), error } as JSONRPCMessage).catch(() => {});
      return;
    }
    const line = Buffer.concat(this.parts).toString("utf8").replace(/\r$/, "");
    this.parts = [];
    this.size = 0;
    try {
      this.onmessage?.(deserializeMessage(line));
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
  }

  start(): Promise<void> {
    if (this.started) throw new Error("BoundedStdioServerTransport already started");
    this.started = true;
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.onstreamerror);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.onstreamerror);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.parts = [];
    this.dropping = undefined;
    this.onclose?.();
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(serializeMessage(message))) resolve();
      else this.stdout.once("drain", resolve);
    });
  }
}
