/**
 * A tool: its name, the zod schemas of its input and output (from src/api), honest annotations, and a handler
 * that calls the session service. `defineTool` keeps the handler typed with its own schemas and gives the server
 * one erased shape to list and call. Every transport calls a tool through server/call.ts (validation, the result
 * check, the audit line); server.ts maps errors to MCP results.
 */
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { CallContext } from "../core/context.js";
import type { SessionService } from "../sessions/service.js";

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

interface ToolDef<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
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
  /** Validates the raw arguments against the input schema and runs the handler. */
  invoke(svc: SessionService, raw: unknown, ctx: CallContext): Promise<Invoked<R>>;
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
  readResource?(uri: string, id: string, svc: SessionService): Promise<{ uri: string; mimeType?: string; text?: string }[] | undefined>;
  /** Subscribes to a session:// resource of a session on a node (false: the session is this machine's). */
  subscribeResource?(uri: string, id: string, svc: SessionService): Promise<boolean>;
  /** notifications/resources/updated of subscribed remote resources. */
  onResourceUpdated?(l: (uri: string) => void): () => void;
  /** The nodes' sessions as last listed (no call: resources/list), with whether their node answers now. */
  knownSessions?(): RemoteSession[];
  /** A node's sessions changed (one started, ended or went away, or the node was first listed). */
  onSessionsChanged?(l: () => void): () => void;
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

export function defineTool<I extends z.ZodType, O extends z.ZodType>(t: ToolDef<I, O>): Tool<z.infer<O>> {
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    input: t.input,
    output: t.output,
    annotations: t.annotations,
    async invoke(svc, raw, ctx) {
      const parsed = t.input.safeParse(raw);
      if (!parsed.success) return { ok: false, error: parsed.error };
      return { ok: true, value: await t.handler(svc, parsed.data, ctx) };
    },
  };
}
