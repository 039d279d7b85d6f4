/**
 * A loopback webhook receiver for the automations tests: records every request (headers, raw body, time) and answers
 * as the test says (a status, or never).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  at: number;
  headers: IncomingMessage["headers"];
  body: string;
  json: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  got: Received[];
  /** What to answer request n (0-based): a status, or "hang" (never answer). */
  answer: (n: number) => number | "hang";
  close(): Promise<void>;
}

export async function startReceiver(answer: (n: number) => number | "hang" = () => 200): Promise<Receiver> {
  const open = new Set<ServerResponse>();
  const r: Receiver = {
    url: "",
    got: [],
    answer,
    close: async () => {
      for (const res of open) res.destroy();
      srv.closeAllConnections();
      await new Promise<void>((ok) => srv.close(() => ok()));
    },
  };
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const n = r.got.length;
      r.got.push({ at: Date.now(), headers: req.headers, body, json: JSON.parse(body) as Record<string, unknown> });
      const a = r.answer(n);
      if (a === "hang") {
        open.add(res);
        return;
      }
      res.writeHead(a).end();
    });
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", () => ok()));
  r.url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
  return r;
}

/** What docs/automations.md tells a receiver to do: check the signature over "<t>.<raw body>" and its age. */
export function verified(secret: string, r: Received, toleranceS = 300): boolean {
  const header = String(r.headers["x-claude-sessions-signature"] ?? "");
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  if (Math.abs(Date.now() / 1000 - Number(m[1])) > toleranceS) return false;
  const want = createHmac("sha256", secret).update(`${m[1]}.${r.body}`).digest();
  return timingSafeEqual(want, Buffer.from(m[2]!, "hex"));
}
