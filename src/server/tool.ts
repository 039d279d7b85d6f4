/**
 * A tool: its name, zod schemas for input and output, honest annotations, and a handler that
 * calls the orchestrator. Validation, error mapping and the text copy happen once, in server.ts.
 */
import type { z } from "zod";
import type { CallContext, Orchestrator } from "../sessions/orchestrator.js";

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  handler(orch: Orchestrator, args: z.infer<I>, ctx: CallContext): Promise<z.infer<O>>;
}

export function defineTool<I extends z.ZodType, O extends z.ZodType>(t: ToolDef<I, O>): ToolDef<I, O> {
  return t;
}
