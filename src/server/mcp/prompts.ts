/**
 * Prompts: start_task, handoff and review_team, each with typed arguments, and completions of the values the
 * server knows (session ids, team names, cwds) for prompt arguments and the resource templates' session_id and team_name.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  type GetPromptResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { SessionError } from "../../core/errors.js";
import { rpc } from "./rpc-error.js";
import type { SessionService } from "../../sessions/service.js";

type Known = "session_id" | "team_name" | "cwd";

interface PromptDef {
  name: string;
  title: string;
  description: string;
  args: z.ZodObject;
  /** Arguments whose values the server can complete, and from which list. */
  complete: Record<string, Known>;
  /** The tools its text leads to: the prompt is offered only by a server that offers them (toolsets). */
  uses: readonly string[];
  text(a: Record<string, string | undefined>): string;
}

const text = (max: number) => z.string().min(1).max(max);

export const PROMPTS: PromptDef[] = [
  {
    name: "start_task",
    title: "Start a session on a task",
    description: "Start a Claude Code session in a directory on a task, with its ids and how to report back.",
    args: z.strictObject({
      cwd: text(4096).describe("Working directory of the new session."),
      task: text(20000).describe("What the session should do."),
      team_name: text(200).optional().describe("Team to file the session under."),
      report_to: text(200).optional().describe("Who or what the session reports to when done."),
    }),
    complete: { cwd: "cwd", team_name: "team_name" },
    uses: ["start_session", "send_message", "respond_permission", "wait_for_completion"],
    text: (a) =>
      `Start a Claude Code session with the claude-sessions tools: call start_session with cwd ${JSON.stringify(a.cwd)}` +
      `${a.team_name ? ` and team_name ${JSON.stringify(a.team_name)}` : ""}. ` +
      `Keep the session_id it returns. Then call send_message with that session_id and this task as the message:\n\n${a.task}\n\n` +
      `Ask the session to finish its reply with a short report: what it changed, how it checked it, and what is left. ` +
      `${a.report_to ? `Pass that report to ${a.report_to}. ` : ""}` +
      `If a turn stops for a permission answer (you will get a notification), decide with respond_permission; for long turns use wait_for_completion.`,
  },
  {
    name: "handoff",
    title: "Hand work from one session to another",
    description: "Have a session write a handoff note, then give it to another (or a new) session.",
    args: z.strictObject({
      from_session_id: text(64).describe("The session handing off."),
      to_session_id: text(64).optional().describe("The session taking over (default: resume or start a new one)."),
      focus: text(2000).optional().describe("What the note should stress."),
    }),
    complete: { from_session_id: "session_id", to_session_id: "session_id" },
    uses: ["send_message", "start_session", "kill_session"],
    text: (a) =>
      `Call send_message to session ${a.from_session_id} asking it to write a handoff note: the goal, what is done (with commits or files), ` +
      `what is in progress, open questions, and the next three steps${a.focus ? `, stressing ${a.focus}` : ""}. ` +
      "Then " +
      (a.to_session_id
        ? `send that note to session ${a.to_session_id} with send_message`
        : "start a new session in the same cwd (start_session) and send it that note") +
      ", " +
      `asking it to confirm what it will do first. Finally kill_session ${a.from_session_id} if it is no longer needed (it stays resumable).`,
  },
  {
    name: "review_team",
    title: "Review one change with a team",
    description: "Start N reviewer sessions on one change, then have a lead summarise their findings.",
    args: z.strictObject({
      cwd: text(4096).describe("The repository holding the change."),
      change: text(2000).describe("The change to review: a branch, commit range or PR."),
      reviewers: z
        .string()
        .regex(/^[1-9]$/)
        .optional()
        .describe("How many reviewers (1-9, default 3)."),
      team_name: text(200).optional(),
    }),
    complete: { cwd: "cwd", team_name: "team_name" },
    uses: ["start_session", "broadcast_message", "wait_for_sessions", "send_message", "kill_session"],
    text: (a) => {
      const n = Number(a.reviewers ?? "3");
      const team = a.team_name ?? "review";
      return (
        `Start ${n} reviewer sessions with start_session (cwd ${JSON.stringify(a.cwd)}, team_name ${JSON.stringify(team)}, ` +
        `teammate_name reviewer-1 … reviewer-${n}). ` +
        `Send them one request with broadcast_message (team_name ${JSON.stringify(team)}, wait_for_response: false): review ${a.change}; ` +
        `each reviewer takes the angle its teammate name gives in this order — correctness, tests, security, design, performance, docs, ` +
        `error handling, concurrency, API — lists findings with file:line and severity, and says what it did not check. ` +
        `Then wait_for_sessions (team_name ${JSON.stringify(team)}, mode all) and read each reviewer's last_response. ` +
        `Then start a lead session (same team, teammate_name lead) and send it all the findings with send_message, asking for one summary: ` +
        `blocking issues first, duplicates merged, and a verdict. Kill the reviewers when the lead has answered.`
      );
    },
  },
];

function argumentsOf(p: PromptDef) {
  return Object.entries(p.args.shape).map(([name, s]) => {
    const schema = s as z.ZodType;
    return { name, description: schema.description ?? name, required: !schema.safeParse(undefined).success };
  });
}

async function known(svc: SessionService, what: Known): Promise<string[]> {
  const st = await svc.deps.store.read();
  const rs = Object.values(st.sessions);
  const vals =
    what === "session_id"
      ? rs.map((r) => r.session_id)
      : what === "team_name"
        ? rs.map((r) => r.team_name)
        : rs.map((r) => r.cwd);
  return [...new Set(vals.filter((v): v is string => typeof v === "string"))].sort();
}

/** The prompts a server offering these tools offers (every tool a prompt leads to is there). */
export function promptsFor(offered: ReadonlySet<string>): PromptDef[] {
  return PROMPTS.filter((p) => p.uses.every((t) => offered.has(t)));
}

export function installPrompts(server: Server, svc: SessionService, offered: ReadonlySet<string>): void {
  const prompts = promptsFor(offered);
  const byName = new Map(prompts.map((p) => [p.name, p]));
  server.setRequestHandler(
    ListPromptsRequestSchema,
    rpc(async () => ({
      prompts: prompts.map((p) => ({ name: p.name, title: p.title, description: p.description, arguments: argumentsOf(p) })),
    })),
  );
  server.setRequestHandler(
    GetPromptRequestSchema,
    rpc(async (req): Promise<GetPromptResult> => {
      const p = byName.get(req.params.name);
      if (!p)
        throw new SessionError("INVALID_ARGUMENT", `there is no prompt named ${JSON.stringify(req.params.name)}.`, {
          suggestion: `The prompts are: ${prompts.map((x) => x.name).join(", ")}.`,
        });
      const parsed = p.args.safeParse(req.params.arguments ?? {});
      if (!parsed.success) {
        throw new SessionError(
          "INVALID_ARGUMENT",
          `invalid arguments for prompt ${p.name}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
        );
      }
      return {
        description: p.description,
        messages: [{ role: "user", content: { type: "text", text: p.text(parsed.data as Record<string, string | undefined>) } }],
      };
    }),
  );
  server.setRequestHandler(
    CompleteRequestSchema,
    rpc(async (req) => {
      const { ref, argument } = req.params;
      let what: Known | undefined;
      if (ref.type === "ref/prompt") what = byName.get(ref.name)?.complete[argument.name];
      else if (ref.type === "ref/resource" && argument.name === "session_id") what = "session_id";
      else if (ref.type === "ref/resource" && argument.name === "team_name") what = "team_name"; // team://{team_name}/handoffs
      const all = what ? await known(svc, what) : [];
      const values = all.filter((v) => v.startsWith(argument.value));
      return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
    }),
  );
}
