/**
 * The page's controls that start work: the start form (start_session), resume and fork (resume_session) and the
 * answer buttons of a blocked screen (answer_prompt). Each is the tool itself through callTool; the page adds one
 * rule of its own: it may start sessions only in the directories the operator allows (CLAUDE_SESSIONS_WEB_ROOTS,
 * a colon or comma list). The MCP tools are not affected by it.
 */
import { realpath } from "node:fs/promises";
import { isAbsolute, normalize } from "node:path";
import { z } from "zod";
import * as api from "../../api/index.js";
import { PERMISSION_MODES } from "../../core/modes.js";
import { SessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { callTool } from "../call.js";
import type { CallRouter, Tool } from "../tool.js";
import { answerPrompt } from "../tools/core/answer-prompt.js";
import { broadcastMessage } from "../tools/broadcast-message.js";
import { HISTORY_TOOLS } from "../tools/history.js";
import { listSessions } from "../tools/core/list-sessions.js";
import { resumeSession } from "../tools/core/resume-session.js";
import { startSession } from "../tools/core/start-session.js";
import { isWithin } from "../../util/fs/paths.js";

export const WEB_ROOTS_ENV = "CLAUDE_SESSIONS_WEB_ROOTS";

const within = (roots: readonly string[], p: string) => roots.some((r) => isWithin(p, r));

/**
 * The cwd the page asked for, if it lies in an allowed root: for this machine its real path (a symbolic link
 * out of a root is refused); for another node, where this server cannot look, the normalised path.
 */
export async function allowedCwd(roots: readonly string[], cwd: string, remote: boolean): Promise<string> {
  if (!roots.length) {
    throw new SessionError("PERMISSION_DENIED", "this server does not let the page start sessions: no directories are allowed.", {
      suggestion: `The operator sets ${WEB_ROOTS_ENV} (a colon or comma list of directories) to allow starting sessions in them from the page.`,
    });
  }
  if (!isAbsolute(cwd)) throw new SessionError("INVALID_ARGUMENT", `cwd must be an absolute path (got ${JSON.stringify(cwd)}).`);
  let p = normalize(cwd).replace(/(.)\/$/, "$1");
  if (!remote) {
    try {
      p = await realpath(p);
    } catch {
      throw new SessionError("INVALID_ARGUMENT", `cwd ${JSON.stringify(cwd)} does not exist.`, {
        suggestion: "Choose one of the directories the form offers, or a folder inside one.",
      });
    }
  }
  if (!within(roots, p)) {
    throw new SessionError(
      "PERMISSION_DENIED",
      `cwd ${JSON.stringify(cwd)} is outside the directories the page may start sessions in.`,
      {
        suggestion: `Choose a folder inside ${roots.join(", ")} (the operator's ${WEB_ROOTS_ENV}).`,
      },
    );
  }
  return p;
}

/** What the start form offers: the allowed roots, recent cwds inside them, backends, modes, teams and nodes. */
export async function startOptions(
  svc: SessionService,
  roots: readonly string[],
  actor: string,
  router?: CallRouter,
): Promise<unknown> {
  const listed = await callTool(svc, listSessions, { status_filter: "all" }, { actor }, router ? { router } : {});
  const rows = [...listed.sessions].sort((a, b) =>
    String(b.last_active ?? b.created_at).localeCompare(String(a.last_active ?? a.created_at)),
  );
  const recent = [...new Set(rows.map((s) => s.cwd).filter((c) => within(roots, c) && !roots.includes(c)))].slice(0, 12);
  const teams = [...new Set(rows.map((s) => s.team_name).filter((t): t is string => Boolean(t)))].sort();
  const nodes = [...new Set(rows.map((s) => s.node).filter((n): n is string => Boolean(n)))].sort();
  return {
    roots,
    recent,
    backends: Object.keys(svc.deps.runners),
    default_backend: svc.deps.defaultKind,
    permission_modes: PERMISSION_MODES,
    teams,
    nodes,
  };
}

/** The fields the start form may set; everything else of start_session keeps its defaults. */
const startBody = z.strictObject({
  cwd: z.string().max(4096),
  prompt: z.string().optional(),
  model: z.string().optional(),
  permission_mode: z.string().optional(),
  backend: z.string().optional(),
  node: z.string().optional(),
  team_name: z.string().optional(),
  teammate_name: z.string().optional(),
  worktree: z.boolean().optional(),
  // The form's sandbox select: "" (the server's default), "on", "off".
  sandbox: z.enum(["", "on", "off"]).optional(),
});
const resumeBody = z.strictObject({ message: z.string().optional(), fork: z.boolean().optional() });
const answerBody = z.strictObject({ choice: z.union([z.number(), z.string()]) });

/** Empty strings from the form mean "not given". */
function given<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== "")) as Partial<T>;
}

export async function startFromPage(
  svc: SessionService,
  roots: readonly string[],
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<api.StartOutput> {
  const { sandbox, ...b } = given(startBody.parse(body));
  const remote = b.node !== undefined && b.node !== "local";
  const cwd = await allowedCwd(roots, b.cwd ?? "", remote);
  return callTool(
    svc,
    startSession,
    { ...b, cwd, ...(sandbox ? { sandbox: sandbox === "on" } : {}) },
    { actor },
    router ? { router } : {},
  );
}

export function resumeFromPage(
  svc: SessionService,
  id: string,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<api.ResumeOutput> {
  return callTool(svc, resumeSession, { session_id: id, ...given(resumeBody.parse(body)) }, { actor }, router ? { router } : {});
}

export function answerFromPage(
  svc: SessionService,
  id: string,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<api.AnswerPromptOutput> {
  return callTool(
    svc,
    answerPrompt,
    { session_id: id, choice: answerBody.parse(body).choice },
    { actor },
    router ? { router } : {},
  );
}

/** A conversation this server did not start (a search hit): resume_session adopts it — in an allowed folder only. */
const adoptBody = z.strictObject({
  claude_session_id: z.string(),
  cwd: z.string(),
  message: z.string().optional(),
  fork: z.boolean().optional(),
});

export async function adoptFromPage(
  svc: SessionService,
  roots: readonly string[],
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<api.ResumeOutput> {
  const b = given(adoptBody.parse(body));
  const cwd = await allowedCwd(roots, b.cwd ?? "", false);
  return callTool(svc, resumeSession, { ...b, cwd }, { actor }, router ? { router } : {});
}

/** The read-only history tools the page reads (search, a conversation's pages, the turns this server ran). */
const READABLE = new Map<string, Tool<unknown>>(
  HISTORY_TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => [t.name, t as Tool<unknown>]),
);

export function readFromPage(
  svc: SessionService,
  name: string,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<unknown> {
  const tool = READABLE.get(name);
  if (!tool)
    throw new SessionError("INVALID_ARGUMENT", `the page reads ${[...READABLE.keys()].join(", ")}; not ${JSON.stringify(name)}.`);
  return callTool(svc, tool, body, { actor }, router ? { router } : {});
}

/** Broadcast to a team from the page: broadcast_message, not waiting for the replies (the page shows them live). */
const broadcastBody = z.strictObject({ message: z.string() });

export function broadcastFromPage(
  svc: SessionService,
  team: string,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<api.BroadcastOutput> {
  return callTool(
    svc,
    broadcastMessage,
    { team_name: team, message: broadcastBody.parse(body).message, wait_for_response: false },
    { actor },
    router ? { router } : {},
  );
}
