/**
 * A team member's own tools (issue 25), declared like every other tool: schemas, title and description from
 * api/members.ts (what the member's server, `claude-sessions member`, lists), the team rules in
 * sessions/teams/member-desk.ts. Their calls arrive over the member socket (server/member) and go through
 * server/call.ts like any call: the authorize step checks the member's secret (and, for the lead's tools, that it
 * leads) before its arguments are read, and the one audit line names actor member:<session_id>.
 */
import * as m from "../../api/members.js";
import type { CallContext } from "../../core/context.js";
import * as desk from "../../sessions/teams/member-desk.js";
import type { SessionService } from "../../sessions/service.js";
import { defineTool } from "../tool.js";

/**
 * Who may call it: any member of a team, or only its lead for the lead's tools (LEAD_TOOLS, which the member's
 * server also lists only for a lead). The step checks the secret before anything else is read.
 */
const who = (tool: m.MemberToolName) => async (svc: SessionService, ctx: CallContext) => ({
  ...ctx,
  member: await desk.authorizeMember(svc, ctx.member, tool, (m.LEAD_TOOLS as readonly string[]).includes(tool)),
});

const common = { toolset: "member", route: "local" } as const;

export const listTeammates = defineTool({
  name: "list_teammates",
  ...m.MEMBER_TOOL_DEFS.list_teammates,
  ...common,
  authorize: who("list_teammates"),
  handler: (svc, _a, ctx) => desk.listTeammates(svc, ctx),
});
export const messageTeammate = defineTool({
  name: "message_teammate",
  ...m.MEMBER_TOOL_DEFS.message_teammate,
  ...common,
  authorize: who("message_teammate"),
  handler: (svc, a, ctx) => desk.messageTeammate(svc, a, ctx),
});
export const handoff = defineTool({
  name: "handoff",
  ...m.MEMBER_TOOL_DEFS.handoff,
  ...common,
  authorize: who("handoff"),
  handler: (svc, a, ctx) => desk.handoff(svc, a, ctx),
});
export const readHandoffs = defineTool({
  name: "read_handoffs",
  ...m.MEMBER_TOOL_DEFS.read_handoffs,
  ...common,
  authorize: who("read_handoffs"),
  handler: (svc, a, ctx) => desk.listHandoffs(svc, a, ctx),
});
export const requestShutdown = defineTool({
  name: "request_shutdown",
  ...m.MEMBER_TOOL_DEFS.request_shutdown,
  ...common,
  authorize: who("request_shutdown"),
  handler: (svc, a, ctx) => desk.requestShutdown(svc, a, ctx),
});
export const startTeammate = defineTool({
  name: "start_teammate",
  ...m.MEMBER_TOOL_DEFS.start_teammate,
  ...common,
  authorize: who("start_teammate"),
  handler: (svc, a, ctx) => desk.startTeammate(svc, a, ctx),
});
export const endTeammate = defineTool({
  name: "end_teammate",
  ...m.MEMBER_TOOL_DEFS.end_teammate,
  ...common,
  authorize: who("end_teammate"),
  handler: (svc, a, ctx) => desk.endTeammate(svc, a, ctx),
});

/** Every member tool (none is in tools/list of this server: a member's own server lists them). */
export const MEMBER_TOOL_LIST = [
  listTeammates,
  messageTeammate,
  handoff,
  readHandoffs,
  requestShutdown,
  startTeammate,
  endTeammate,
] as const;
