/**
 * The web view's routes: sign-in, the page and its assets (all local: xterm.js from node_modules), the live
 * feeds, and the controls. Controls call the tools themselves through call.ts (their input schemas, the result
 * check, an audit line with the sign-in as actor), so the page's send box meets the same prompt validation as
 * send_message.
 */
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import * as api from "../../api/index.js";
import { SessionError, toSessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import type { CallRouter } from "../tool.js";
import { callTool } from "../call.js";
import { interruptSession } from "../tools/core/interrupt-session.js";
import { killSession } from "../tools/core/kill-session.js";
import { respondPermission } from "../tools/core/respond-permission.js";
import { sendMessage } from "../tools/core/send-message.js";
import { RETRY_AFTER_S, type Guard, type Verdict } from "./guard.js";
import { listFeed, openFeed, sessionFeed } from "./live.js";
import { fanOutFromPage } from "./fan-out.js";
import { reviewWorktree } from "./review.js";
import { SCHEDULES_PATH, schedulesFromPage } from "./schedules.js";
import { mergeWorktreeTool } from "../tools/merge-worktree.js";
import {
  adoptFromPage,
  answerFromPage,
  broadcastFromPage,
  readFromPage,
  resumeFromPage,
  startFromPage,
  startOptions,
} from "./work.js";
import { accountsView } from "../../claude/account-windows.js";

const WEB = fileURLToPath(new URL("../../../web/", import.meta.url));
const XTERM = join(dirname(createRequire(import.meta.url).resolve("@xterm/xterm")), "..");
const MAX_BODY = 256 * 1024;

const ASSETS: Record<string, [string, string]> = {
  "/assets/app.js": [join(WEB, "app.js"), "text/javascript"],
  "/assets/history.js": [join(WEB, "history.js"), "text/javascript"],
  "/assets/schedules.js": [join(WEB, "schedules.js"), "text/javascript"],
  "/assets/fan-out.js": [join(WEB, "fan-out.js"), "text/javascript"],
  "/assets/style.css": [join(WEB, "style.css"), "text/css"],
  "/assets/xterm.js": [join(XTERM, "lib", "xterm.js"), "text/javascript"],
  "/assets/xterm.css": [join(XTERM, "css", "xterm.css"), "text/css"],
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
};

const STATUS_OF: Record<string, number> = { INVALID_ARGUMENT: 400, SESSION_NOT_FOUND: 404, PERMISSION_DENIED: 403 };

export function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store", ...SECURITY_HEADERS, ...extra });
  res.end(body);
}

function json(res: ServerResponse, status: number, v: unknown): void {
  send(res, status, JSON.stringify(v), "application/json");
}

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const parts: Buffer[] = [];
  for await (const chunk of req) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += b.length;
    if (size > MAX_BODY) throw new SessionError("INVALID_ARGUMENT", `the request body is larger than ${MAX_BODY} bytes.`);
    parts.push(b);
  }
  return Buffer.concat(parts).toString("utf8");
}

async function bodyJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  let v: unknown;
  try {
    v = text ? JSON.parse(text) : {};
  } catch {
    throw new SessionError("INVALID_ARGUMENT", "the request body is not JSON.");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new SessionError("INVALID_ARGUMENT", "the request body must be a JSON object.");
  return { ...v };
}

/** Control bodies: only what the page may set; the rest of each tool's input keeps its defaults. */
const sendBody = z.strictObject({ message: z.string() });
const respondBody = z.strictObject({ decision: api.permissionDecision });
const mergeBody = z.strictObject({ strategy: api.mergeInput.shape.strategy });

async function control(
  svc: SessionService,
  action: string,
  id: string,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<unknown> {
  const ctx = { actor };
  // The tools themselves (their input schemas), through the coordinator's router when there are nodes.
  const o = router ? { router } : {};
  switch (action) {
    case "send":
      return callTool(
        svc,
        sendMessage,
        { session_id: id, message: sendBody.parse(body).message, wait_for_response: false },
        ctx,
        o,
      );
    case "respond":
      return callTool(svc, respondPermission, { session_id: id, decision: respondBody.parse(body).decision }, ctx, o);
    case "interrupt":
      return callTool(svc, interruptSession, { session_id: id }, ctx, o);
    case "kill":
      return callTool(svc, killSession, { session_id: id }, ctx, o);
    case "resume":
      return resumeFromPage(svc, id, body, actor, router);
    case "answer":
      return answerFromPage(svc, id, body, actor, router);
    case "merge":
      // The review page's button (issue 34): merge_worktree into the branch the worktree started from.
      return callTool(svc, mergeWorktreeTool, { session_id: id, ...mergeBody.parse(body) }, ctx, o);
  }
  throw new SessionError("INVALID_ARGUMENT", `there is no action ${JSON.stringify(action)}.`);
}

/** `roots`: the directories the page may start sessions in (CLAUDE_SESSIONS_WEB_ROOTS, see work.ts). */
function failed(res: ServerResponse, e: unknown): void {
  const err =
    e instanceof z.ZodError
      ? new SessionError("INVALID_ARGUMENT", e.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; "))
      : toSessionError(e);
  json(res, STATUS_OF[err.code] ?? 409, { error: err.toBody() });
}

export async function handleWeb(
  svc: SessionService,
  guard: Guard,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  router?: CallRouter,
  roots: readonly string[] = [],
): Promise<void> {
  const path = url.pathname;
  const asset = ASSETS[path];
  if (req.method === "GET" && asset)
    return send(res, 200, await readFile(asset[0]), asset[1], { "cache-control": "max-age=300" });
  if (path === "/login") {
    if (req.method === "GET") return send(res, 200, await readFile(join(WEB, "login.html")), "text/html; charset=utf-8");
    if (req.method !== "POST") return json(res, 405, { error: "method not allowed" });
    const given = new URLSearchParams(await readBody(req)).get("token") ?? "";
    const ok = await guard.signIn(req, given.trim());
    if (ok === "busy")
      return send(
        res,
        429,
        "Too many wrong tokens from this address are still being answered; try again in a few seconds.",
        "text/plain; charset=utf-8",
        { "retry-after": String(RETRY_AFTER_S) },
      );
    if (ok === "wrong") return send(res, 303, "", "text/plain", { location: "/login?failed=1" });
    return send(res, 303, "", "text/plain", { location: "/", "set-cookie": ok.cookie });
  }
  const v: Verdict = await guard.authenticate(req);
  if (!v.ok) {
    if (req.method === "GET" && (path === "/" || path === "/index.html"))
      return send(res, 303, "", "text/plain", { location: "/login" });
    return json(res, v.status, { error: { code: "UNAUTHORIZED", message: v.why } });
  }
  if (req.method === "GET") {
    if (path === "/" || path === "/index.html")
      return send(res, 200, await readFile(join(WEB, "index.html")), "text/html; charset=utf-8");
    if (path === "/api/me") return json(res, 200, { csrf: v.csrf ?? null });
    if (path === "/api/events") return listFeed(svc, openFeed(res), router);
    if (path === "/api/start-options") return json(res, 200, await startOptions(svc, roots, v.actor, router));
    if (path === "/api/accounts") {
      const { cfg, store } = svc.deps;
      return json(res, 200, accountsView(cfg.accountsFile, cfg.stateDir, Object.values((await store.read()).sessions)));
    }
    const rv = /^\/api\/sessions\/([^/]+)\/review$/.exec(path);
    if (rv)
      return await reviewWorktree(svc, api.sessionId.parse(decodeURIComponent(rv[1]!))).then(
        (r) => json(res, 200, r),
        (e: unknown) => failed(res, e),
      );
    const m = /^\/api\/sessions\/([^/]+)\/events$/.exec(path);
    if (m) return sessionFeed(svc, api.sessionId.parse(decodeURIComponent(m[1]!)), openFeed(res), router);
    return json(res, 404, { error: { code: "NOT_FOUND", message: "no such page" } });
  }
  if (req.method !== "POST") return json(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "GET or POST" } });
  if (!guard.csrfOk(req, v))
    return json(res, 403, { error: { code: "CSRF", message: "a state-changing request needs the page's x-csrf-token header" } });
  if (path === "/logout") {
    guard.signOut(req);
    return send(res, 303, "", "text/plain", {
      location: "/login",
      "set-cookie": "cs_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
    });
  }
  if (path === "/api/fan-out") {
    // The fan-out form (issue 34): refused as JSON before anything starts, else a stream of progress lines and the result.
    return await bodyJson(req)
      .then((body) => fanOutFromPage(svc, roots, body, v.actor, router))
      .then(
        (stream) => stream(res, SECURITY_HEADERS),
        (e: unknown) => failed(res, e),
      );
  }
  const m = /^\/api\/sessions\/([^/]+)\/(send|respond|interrupt|kill|resume|answer|merge)$/.exec(path);
  const read = /^\/api\/read\/([a-z_]+)$/.exec(path);
  const team = /^\/api\/teams\/([^/]+)\/broadcast$/.exec(path);
  const sched = SCHEDULES_PATH.exec(path);
  if (!m && !read && !team && !sched && path !== "/api/start" && path !== "/api/adopt")
    return json(res, 404, { error: { code: "NOT_FOUND", message: "no such action" } });
  try {
    const body = await bodyJson(req);
    if (sched) return json(res, 200, await schedulesFromPage(svc, roots, sched, body, v.actor, router));
    if (read) return json(res, 200, await readFromPage(svc, read[1]!, body, v.actor, router));
    if (team) return json(res, 200, await broadcastFromPage(svc, decodeURIComponent(team[1]!), body, v.actor, router));
    if (path === "/api/adopt") return json(res, 200, await adoptFromPage(svc, roots, body, v.actor, router));
    if (!m) return json(res, 200, await startFromPage(svc, roots, body, v.actor, router));
    json(res, 200, await control(svc, m[2]!, api.sessionId.parse(decodeURIComponent(m[1]!)), body, v.actor, router));
  } catch (e) {
    failed(res, e);
  }
}
