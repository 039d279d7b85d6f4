/**
 * The web view's schedules page (issue 37): list, make, pause, resume and delete schedules. Each control is the
 * schedule tool itself through callTool (its input schema, the result check, an audit line with the sign-in as
 * actor). The page adds the rule its start form has: a schedule that starts run_task may do so only in the
 * directories the operator allows (CLAUDE_SESSIONS_WEB_ROOTS); one that sends to a session needs no folder.
 */
import { z } from "zod";
import { SessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { callTool } from "../call.js";
import type { CallRouter } from "../tool.js";
import { changeScheduleTool, listSchedulesTool, scheduleTask } from "../tools/schedules.js";
import { allowedCwd } from "./work.js";

/** The fields the page's form may set; everything else of schedule_task keeps its defaults. */
const createBody = z.strictObject({
  name: z.string(),
  every: z.string().optional(),
  cron: z.string().optional(),
  at: z.string().optional(),
  cwd: z.string().max(4096).optional(),
  session_id: z.string().optional(),
  prompt: z.string(),
  overlap: z.enum(["", "skip", "queue"]).optional(),
});
const emptyBody = z.strictObject({});

/** `/api/schedules/list`, `/api/schedules/create`, `/api/schedules/<name>/(pause|resume|delete)`. */
export const SCHEDULES_PATH = /^\/api\/schedules\/(?:(list|create)|([^/]+)\/(pause|resume|delete))$/;

export async function schedulesFromPage(
  svc: SessionService,
  roots: readonly string[],
  m: RegExpExecArray,
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<unknown> {
  const ctx = { actor };
  const o = router ? { router } : {};
  if (m[1] === "list") return callTool(svc, listSchedulesTool, emptyBody.parse(body), ctx, o);
  if (m[1] === "create") {
    // Empty strings from the form mean "not given".
    const b = Object.fromEntries(
      Object.entries(createBody.parse(body)).filter(([, v]) => v !== undefined && v !== ""),
    ) as Partial<z.infer<typeof createBody>>;
    const { session_id, cwd, ...rest } = b;
    if (session_id !== undefined && cwd !== undefined)
      throw new SessionError("INVALID_ARGUMENT", "give a folder (a new session each run) or a session to send to, not both.");
    const target: Record<string, unknown> =
      session_id !== undefined ? { send_to: { session_id } } : { cwd: await allowedCwd(roots, cwd ?? "", false) };
    return callTool(svc, scheduleTask, { ...rest, ...target }, ctx, o);
  }
  emptyBody.parse(body);
  return callTool(
    svc,
    changeScheduleTool,
    { name: decodeURIComponent(m[2]!), action: m[3] as "pause" | "resume" | "delete" },
    ctx,
    o,
  );
}
