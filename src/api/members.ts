/**
 * A team member's own tools (issue 25): the small MCP server `claude-sessions member` that every session with a
 * team_name gets in its Claude Code configuration, and the line protocol it speaks with the server over the
 * state directory's Unix socket. These are not tools of the main server's list: a member sees only these.
 */
import { z } from "zod";
import { status, teammateName } from "./common.js";

/** The member server's name in the session's MCP configuration (its tools are `mcp__claude-sessions-team__<tool>`). */
export const MEMBER_SERVER_NAME = "claude-sessions-team";

/** The session's variables the member process reads (the secret is in the CLI's environment only, never argv). */
export const MEMBER_ENV = {
  secret: "CLAUDE_SESSIONS_MEMBER_SECRET",
  socket: "CLAUDE_SESSIONS_MEMBER_SOCKET",
  session: "CLAUDE_SESSIONS_ID",
  lead: "CLAUDE_SESSIONS_TEAM_LEAD",
} as const;

const message = z.string().min(1).max(100_000);

export const listTeammatesInput = z.object({}).strict();
export const teammateView = z.strictObject({
  teammate_name: z.string(),
  session_id: z.string(),
  status,
  you: z.boolean().optional(),
  lead: z.boolean().optional(),
  doing: z.string().optional().describe("What it is busy with: the tool it runs or the prompt of its turn."),
  last_active: z.string().optional(),
  shutdown_requested: z.string().optional().describe("It asked to be ended, with this reason."),
});
export const listTeammatesOutput = z.strictObject({
  team_name: z.string(),
  you: z.string().describe("Your own teammate_name."),
  teammates: z.array(teammateView),
});

export const messageTeammateInput = z
  .object({
    teammate_name: teammateName.describe("A teammate's name (list_teammates)."),
    message: message.describe('Delivered as a prompt starting "From <your name>:"; queued while it is busy.'),
    wait_for_response: z.boolean().default(false).describe("Wait for the teammate's reply to this message."),
    timeout_ms: z.number().int().min(1000).max(1_800_000).default(300_000).describe("How long to wait for the reply."),
  })
  .strict();
export const messageTeammateOutput = z.strictObject({
  teammate_name: z.string(),
  session_id: z.string(),
  delivered: z.boolean(),
  queued: z.boolean().optional().describe("It was busy: the message runs after its current turn."),
  response: z.string().optional().describe("wait_for_response: the teammate's reply."),
  completed: z.boolean().optional(),
  timed_out: z.boolean().optional().describe("It did not answer in timeout_ms; its turn goes on."),
  status: z.string().optional(),
});

export const handoffInput = z
  .object({
    to: teammateName
      .optional()
      .describe("The teammate who takes over; it gets the summary as a prompt. Omit: stored for the team."),
    summary: message.describe("What was done, what is left, where things are."),
  })
  .strict();
export const handoffRecord = z.strictObject({
  id: z.string(),
  at: z.string(),
  team_name: z.string(),
  from: z.string(),
  from_session_id: z.string(),
  to: z.string().optional(),
  summary: z.string(),
});
export const handoffOutput = z.strictObject({
  handoff: handoffRecord,
  delivered_to: z.string().optional(),
  queued: z.boolean().optional(),
  resource: z.string().describe("The team's hand-offs as a resource of the main server."),
});

export const readHandoffsInput = z.object({ limit: z.number().int().min(1).max(200).default(20) }).strict();
export const readHandoffsOutput = z.strictObject({ team_name: z.string(), handoffs: z.array(handoffRecord) });

export const requestShutdownInput = z.object({ reason: z.string().min(1).max(2000).describe("Why you are done.") }).strict();
export const requestShutdownOutput = z.strictObject({
  requested: z.boolean(),
  notified_lead: z.string().optional().describe("The team's lead, who can approve with end_teammate."),
  note: z.string(),
});

/** The lead's (start_session {team_lead: true}): a teammate in the same team, the same checks and limits as start_session. */
export const startTeammateInput = z
  .object({
    teammate_name: teammateName.optional().describe("Default: generated."),
    prompt: z.string().max(100_000).optional().describe("Its first prompt."),
    cwd: z.string().min(1).max(4096).optional().describe("Your cwd or a folder under it (default: yours)."),
    model: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\s\0]+$/)
      .optional(),
  })
  .strict();
export const startTeammateOutput = z.strictObject({ teammate_name: z.string(), session_id: z.string(), status: z.string() });

export const endTeammateInput = z
  .object({
    teammate_name: teammateName,
    force: z.boolean().default(false),
  })
  .strict();
export const endTeammateOutput = z.strictObject({
  teammate_name: z.string(),
  session_id: z.string(),
  ended: z.boolean(),
  status: z.string(),
});

export const MEMBER_TOOLS = ["list_teammates", "message_teammate", "handoff", "read_handoffs", "request_shutdown"] as const;
export const LEAD_TOOLS = ["start_teammate", "end_teammate"] as const;
export type MemberToolName = (typeof MEMBER_TOOLS)[number] | (typeof LEAD_TOOLS)[number];

/** One request on the socket: a line of JSON. The secret authenticates `session_id`; the server keeps only its hash. */
export const memberRequest = z.strictObject({
  session_id: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_-]+$/),
  secret: z.string().min(1).max(200),
  tool: z.enum([...MEMBER_TOOLS, ...LEAD_TOOLS]),
  arguments: z.record(z.string(), z.unknown()).default({}),
});
export type MemberRequest = z.infer<typeof memberRequest>;

/** The answer line: the tool's result, or a SessionError's body. */
export type MemberResponse =
  | { ok: true; result: Record<string, unknown> }
  | {
      ok: false;
      error: { code: string; message: string; retryable: boolean; suggestion: string; details?: Record<string, unknown> };
    };

export type ListTeammatesOutput = z.infer<typeof listTeammatesOutput>;
export type MessageTeammateInput = z.infer<typeof messageTeammateInput>;
export type MessageTeammateOutput = z.infer<typeof messageTeammateOutput>;
export type HandoffInput = z.infer<typeof handoffInput>;
export type HandoffRecord = z.infer<typeof handoffRecord>;
export type HandoffOutput = z.infer<typeof handoffOutput>;
export type ReadHandoffsInput = z.infer<typeof readHandoffsInput>;
export type ReadHandoffsOutput = z.infer<typeof readHandoffsOutput>;
export type RequestShutdownInput = z.infer<typeof requestShutdownInput>;
export type RequestShutdownOutput = z.infer<typeof requestShutdownOutput>;
export type StartTeammateInput = z.infer<typeof startTeammateInput>;
export type StartTeammateOutput = z.infer<typeof startTeammateOutput>;
export type EndTeammateInput = z.infer<typeof endTeammateInput>;
export type EndTeammateOutput = z.infer<typeof endTeammateOutput>;

/** Each member tool: its schemas, title, description and annotations (the member server lists them; the socket checks them). */
export const MEMBER_TOOL_DEFS = {
  list_teammates: {
    title: "List teammates",
    description: "Your team's sessions: name, status, what each is doing.",
    input: listTeammatesInput,
    output: listTeammatesOutput,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  message_teammate: {
    title: "Message a teammate",
    description: 'Send a teammate a message (a prompt starting "From <you>:"); wait_for_response returns its reply.',
    input: messageTeammateInput,
    output: messageTeammateOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  handoff: {
    title: "Hand off work",
    description: "Store a hand-off summary for the team; with `to`, that teammate gets it as a prompt.",
    input: handoffInput,
    output: handoffOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  read_handoffs: {
    title: "Read hand-offs",
    description: "The team's hand-offs, newest last.",
    input: readHandoffsInput,
    output: readHandoffsOutput,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  request_shutdown: {
    title: "Request shutdown",
    description: "Say you are done and ask to be ended: the client (or the team's lead) approves.",
    input: requestShutdownInput,
    output: requestShutdownOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  start_teammate: {
    title: "Start a teammate",
    description: "Lead only: start a new session in your team (start_session's checks and limits).",
    input: startTeammateInput,
    output: startTeammateOutput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  end_teammate: {
    title: "End a teammate",
    description: "Lead only: end a teammate's session (approves its request_shutdown).",
    input: endTeammateInput,
    output: endTeammateOutput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
} as const satisfies Record<
  MemberToolName,
  { title: string; description: string; input: z.ZodType; output: z.ZodType; annotations: Record<string, boolean> }
>;
