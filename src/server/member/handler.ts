/**
 * The server's side of a member's call (issue 25): one request line from the member socket names the tool, the
 * member's session and that session's secret. The member tools are declared like every tool (server/tools/member.ts)
 * and called through server/call.ts: their authorize step checks the secret (the team rules are
 * sessions/teams/member-desk.ts), and the call leaves one audit line with actor `member:<session_id>`.
 */
import * as m from "../../api/members.js";
import type { CallContext } from "../../core/context.js";
import { SessionError, toSessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { callTool, zodMessage } from "../call.js";
import type { Tool } from "../tool.js";
import { MEMBER_TOOL_LIST } from "../tools/member.js";

const BY_NAME = new Map<string, Tool>(MEMBER_TOOL_LIST.map((t) => [t.name, t as Tool]));

/** Answers one member request; never throws (a failure is the error's body). */
export async function handleMember(svc: SessionService, raw: unknown, ctx: CallContext = {}): Promise<m.MemberResponse> {
  const parsed = m.memberRequest.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      error: new SessionError("INVALID_ARGUMENT", `not a member request: ${zodMessage(parsed.error)}`).toBody(),
    };
  const req = parsed.data;
  try {
    const tool = BY_NAME.get(req.tool);
    if (!tool) throw new SessionError("INVALID_ARGUMENT", `there is no member tool named ${JSON.stringify(req.tool)}.`);
    const member = { session_id: req.session_id, secret: req.secret };
    const result = await callTool(svc, tool, req.arguments, { ...ctx, actor: `member:${req.session_id}`, member });
    return { ok: true, result: result as Record<string, unknown> };
  } catch (e) {
    return { ok: false, error: toSessionError(e).toBody() };
  }
}
