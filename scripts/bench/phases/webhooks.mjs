/**
 * webhooks (issue 37): how long after a PermissionRequest hook writes its line does a loopback receiver get the
 * signed session.needs_you delivery? The notify phase's loop (permission-latency.mjs), the clock stopped when the
 * receiver (an HTTP server in the bench process, answering 204) has read that sample's body. Every delivery's
 * signature is checked.
 */
import { createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { permissionLatency } from "../permission-latency.mjs";
import { summary } from "../stats.mjs";
import { makeWorld } from "../world.mjs";

const SECRET = "bench-webhook-secret-0123456789";

export async function webhooks(cfg, log) {
  const waiting = new Map();
  let bad = 0;
  const srv = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const t = performance.now();
      const body = Buffer.concat(chunks).toString("utf8");
      const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(req.headers["x-claude-sessions-signature"])) ?? [];
      if (createHmac("sha256", SECRET).update(`${ts}.${body}`).digest("hex") !== v1) bad++;
      res.writeHead(204).end();
      const j = JSON.parse(body);
      const done = waiting.get(j.tool_name === "Bash" ? j.session_id : undefined);
      if (done && j.event === "session.needs_you") done(t);
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const w = makeWorld("webhooks");
  const file = join(w.root, "webhooks.json");
  writeFileSync(
    file,
    JSON.stringify({
      endpoints: [{ url: `http://127.0.0.1:${srv.address().port}/hook`, events: ["session.needs_you"], secret: SECRET }],
    }),
    { mode: 0o600 },
  );
  let m;
  try {
    m = await w.connect({ CLAUDE_SESSIONS_WEBHOOKS: file });
    const lat = await permissionLatency(w, m, {
      cwd: w.dir("hooks"),
      runs: cfg.notifyRuns,
      label: "webhooks",
      arrival: (id) => ({
        at: new Promise((resolve) => waiting.set(id, resolve)),
        cancel: () => waiting.delete(id),
      }),
    });
    if (log) log(`webhooks: ${lat.length} samples`);
    const sl = summary(lat);
    return [
      {
        key: "webhooks",
        figure: "webhooks: PermissionRequest hook line → session.needs_you delivered (loopback)",
        runs: lat.length,
        ...sl,
        notes: `signed POST to a receiver in the bench process; ${bad} bad signature(s)`,
        target: "p95 ≤ 100 ms, 0 bad signatures",
        result: sl.p95 !== undefined && sl.p95 <= 100 && bad === 0 ? "PASS" : "MISS",
        data: { latency_ms: sl, bad_signatures: bad },
      },
    ];
  } finally {
    await m?.close();
    w.cleanup();
    srv.closeAllConnections();
    srv.close();
  }
}
