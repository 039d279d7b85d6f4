#!/usr/bin/env node
/**
 * A local HTTP hook listener for `hook-events.mjs` (issue 38 item 1): the CLI's `type: "http"` hooks POST each
 * event's payload here; the body is appended as one line to `<dir>/<last part of the URL path>`, then answered
 * 200 with an empty body (the CLI reads that as `{}`). The line is written before the answer, so a synchronous
 * hook's order is kept. Prints its port on stdout, then runs until killed.
 *   node scripts/bench/hook-sink.mjs <dir>
 */
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { basename, join } from "node:path";

const dir = process.argv[2];
if (!dir) throw new Error("usage: hook-sink.mjs <dir>");
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const name = basename(new URL(req.url ?? "/", "http://x").pathname);
    const body = Buffer.concat(chunks).toString("utf8").replace(/\n/g, "");
    if (name) appendFileSync(join(dir, name), `\n${body}\n`);
    res.writeHead(200, { "content-length": "0" }).end();
  });
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
