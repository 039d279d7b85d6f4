/**
 * A team member's own tools (issue 25), declared like every other tool: schemas, title and description from
 * api/members.ts (what the member's server, `claude-sessions member`, lists), the team rules in
 * sessions/teams/member-desk.ts. Their calls arrive over the member socket (server/member) and go through
 * server/call.ts like any call: the authorize step checks the member's secret (and, for the lead's tools, that it
 * leads) before its arguments are read, and the one audit line names actor member:<session_id>.
 */
import { MEMBER_TOOL_DEFS as D } from "../../api/members.js";
import type { CallContext } from "../../core/context.js";
import * as desk from "../../sessions/teams/member-desk.js";
import type { SessionService } from "../../sessions/service.js";
import { defineTool } from "../tool.js";

/** Any member of a team may call it. */
const member = (tool: string) => async (svc: SessionService, ctx: CallContext) => ({ ...ctx, member: await desk.authorizeMember(svc, ctx.member, tool) });
/** Only its team's lead may call it. */
const lead = (tool: string) => async (svc: SessionService, ctx: CallContext) => ({ ...ctx, member: await desk.authorizeMember(svc, ctx.member, tool, true) });

const common = { toolset: "member", route: "local" } as const;

export const listTeammates = defineTool({ name: "list_teammates", ...D.list_teammates, ...common, authorize: member("list_teammates"), handler: (svc, _a, ctx) => desk.listTeammates(svc, ctx) });
export const messageTeammate = defineTool({ name: "message_teammate", ...D.message_teammate, ...common, authorize: member("message_teammate"), handler: (svc, a, ctx) => desk.messageTeammate(svc, a, ctx) });
export const handoff = defineTool({ name: "handoff", ...D.handoff, ...common, authorize: member("handoff"), handler: (svc, a, ctx) => desk.handoff(svc, a, ctx) });
export const readHandoffs = defineTool({ name: "read_handoffs", ...D.read_handoffs, ...common, authorize: member("read_handoffs"), handler: (svc, a, ctx) => desk.listHandoffs(svc, a, ctx) });
export const requestShutdown = defineTool({ name: "request_shutdown", ...D.request_shutdown, ...common, authorize: member("request_shutdown"), handler: (svc, a, ctx) => desk.requestShutdown(svc, a, ctx) });
export const startTeammate = defineTool({ name: "start_teammate", ...D.start_teammate, ...common, authorize: lead("start_teammate"), handler: (svc, a, ctx) => desk.startTeammate(svc, a, ctx) });
export const endTeammate = defineTool({ name: "end_teammate", ...D.end_teammate, ...common, authorize: lead("end_teammate"), handler: (svc, a, ctx) => desk.endTeammate(svc, a, ctx) });

/** Every member tool (none is in tools/list of this server: a member's own server lists them). */
export const MEMBER_TOOL_LIST = [listTeammates, messageTeammate, handoff, readHandoffs, requestShutdown, startTeammate, endTeammate] as const;
