/**
 * A tool is one declaration: its name, the zod schemas of its input and output (from src/api), honest annotations,
 * the toolset it is offered in, how a coordinator routes it across nodes, who may call it, and a handler that calls
 * the session service. Everything else is derived from the declarations: the toolsets' lists (toolsets.ts), the
 * nodes' routing (src/nodes/coordinator.ts switches on `route`), the test client's typed table
 * (tests/helpers/tools.ts). `defineTool` keeps the handler typed with its own schemas and gives the server one erased
 * shape to list and call. Every transport calls a tool through server/call.ts (authorization, validation, the
 * result check, the audit line); server.ts maps errors to MCP results.
 */
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { ToolsetName } from "../config.js";
import type { CallContext } from "../core/context.js";
import type { SessionService } from "../sessions/service.js";

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * Where the tool is offered: a toolset of CLAUDE_SESSIONS_TOOLSETS (tools/list of this server), or "member": a team
 * session's own server (`claude-sessions member`), whose calls reach this server over the member socket.
 */
export type Toolset = Exclude<ToolsetName, "all"> | "member";

/**
 * How a coordinator of other machines (src/nodes) runs a call of the tool:
 * - session: on the machine that runs the session it names (session_id, or team_name + teammate_name); here when it
 *   names none;
 * - placed: where its `node` argument says ("auto": the machine with the most room; default here);
 * - wake: as session, except that with CLAUDE_SESSIONS_WAKE_ANYWHERE a hibernated session whose machine is full first
 *   moves to the machine with room (src/nodes/wake.ts) and the call wakes it there;
 * - adopt: as session, except that adopting a conversation by claude_session_id alone goes where that conversation is;
 * - group: a team (team_name alone) or a list of session_ids: split by owner, a part on each machine, answers merged;
 * - listing: every machine's sessions in one answer; health: one check per node;
 * - history: every machine's history merged, or the machine that has the conversation or session asked;
 * - local: this machine only;
 * - move: the coordinator's move of a session between machines (src/nodes/move.ts).
 */
export type Route = "session" | "wake" | "placed" | "adopt" | "group" | "listing" | "health" | "history" | "local" | "move";

interface ToolDef<N extends string, I extends z.ZodType, O extends z.ZodType> {
  name: N;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  toolset: Toolset;
  route: Route;
  /**
   * Who may call it, before its arguments are read: returns the context the handler runs with (e.g. the member
   * whose secret was checked), or throws a SessionError (PERMISSION_DENIED) and nothing is done.
   */
  authorize?(svc: SessionService, ctx: CallContext): Promise<CallContext>;
  handler(svc: SessionService, args: z.infer<I>, ctx: CallContext): Promise<z.infer<O>>;
}

export type Invoked<R = unknown> = { ok: true; value: R } | { ok: false; error: z.ZodError };

/** A tool; `R` is its result's type (unknown in the erased list the server shows). */
export interface Tool<R = unknown> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output: z.ZodType;
  readonly annotations: ToolAnnotations;
  readonly toolset: Toolset;
  readonly route: Route;
  readonly authorize?: (svc: SessionService, ctx: CallContext) => Promise<CallContext>;
  /** Validates the raw arguments against the input schema and runs the handler. */
  invoke(svc: SessionService, raw: unknown, ctx: CallContext): Promise<Invoked<R>>;
}

/** A declared tool with its own name and schemas in its type (what the typed test client reads). */
export interface DefinedTool<N extends string, I extends z.ZodType, O extends z.ZodType> extends Tool<z.infer<O>> {
  readonly name: N;
  readonly input: I;
  readonly output: O;
}

/**
 * Where calls go when this server coordinates other machines (src/nodes): it validates the arguments with the
 * tool's schema and runs the call here or forwards it to the node that owns the session. Tools need nothing of
 * their own for it; the server calls `invoke` instead of `tool.invoke` when one is given.
 */
export interface CallRouter {
  invoke<R>(tool: Tool<R>, svc: SessionService, raw: unknown, ctx: CallContext): Promise<Invoked<R>>;
  /** Session notices of the nodes (notifications/message data, with `node`), for this server's clients. */
  onNotice(l: (level: LoggingLevel, data: Record<string, unknown>) => void): () => void;
  /** A session:// resource of a session on a node; undefined when the session is this machine's. */
  readResource?(
    uri: string,
    id: string,
    svc: SessionService,
  ): Promise<{ uri: string; mimeType?: string; text?: string }[] | undefined>;
  /** Subscribes to a session:// resource of a session on a node (false: the session is this machine's). */
  subscribeResource?(uri: string, id: string, svc: SessionService): Promise<boolean>;
  /** notifications/resources/updated of subscribed remote resources. */
  onResourceUpdated?(l: (uri: string) => void): () => void;
  /** The nodes' sessions as last listed (no call: resources/list), with whether their node answers now. */
  knownSessions?(): RemoteSession[];
  /** A node's sessions changed (one started, ended or went away, or the node was first listed). */
  onSessionsChanged?(l: () => void): () => void;
  /** Any row of a node's listing may have changed (it said so, or its link came up): pushed on to a coordinator above. */
  onRowsChanged?(l: () => void): () => void;
}

/** A session on a node, as the coordinator last knew it. */
export interface RemoteSession {
  session_id: string;
  node: string;
  status: string;
  team_name?: string;
  created_at?: string;
  /** Whether the node's link is up now (else the row is its last known state). */
  reachable: boolean;
}

export function defineTool<N extends string, I extends z.ZodType, O extends z.ZodType>(
  t: ToolDef<N, I, O>,
): DefinedTool<N, I, O> {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    input: t.input,
    output: t.output,
    annotations: t.annotations,
    toolset: t.toolset,
    route: t.route,
    ...(t.authorize ? { authorize: t.authorize } : {}),
    async invoke(svc, raw, ctx) {
      const parsed = t.input.safeParse(raw);
      if (!parsed.success) return { ok: false, error: parsed.error };
      return { ok: true, value: await t.handler(svc, parsed.data, ctx) };
    },
  };
}
