/**
 * The launch options a session's record keeps for resume_session: one typed shape from start to the SDK. Read
 * back tolerantly: an option this version does not know is dropped (state files of other versions load), and a
 * value of the wrong shape is dropped, never the record.
 */
import { z } from "zod";
import { PERMISSION_MODES } from "../core/modes.js";

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
const json: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(json), z.record(z.string(), json)]),
);

/** Kept if it parses, else dropped. */
const kept = <T extends z.ZodType>(t: T) => t.optional().catch(undefined);

export const SETTING_SOURCES = ["user", "project", "local"] as const;
export const EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

export const StoredOptionsSchema = z.object({
  // Claude's own (argv on a terminal, the SDK's options headless).
  model: kept(z.string().min(1)),
  permission_mode: kept(z.enum(PERMISSION_MODES)),
  append_system_prompt: kept(z.string().min(1)),
  add_dirs: kept(z.array(z.string())),
  allowed_tools: kept(z.array(z.string())),
  disallowed_tools: kept(z.array(z.string())),
  // The server's.
  trust_workspace: kept(z.boolean()),
  /** start_session {team_lead}: the member server also offers start_teammate and end_teammate. */
  team_lead: kept(z.boolean()),
  /** start_session's options, hashed: the same session_id with other options is refused. */
  start_fingerprint: kept(z.string()),
  /** The same per option given (a short hash each): an ALREADY_EXISTS names the options that differ. */
  start_fields: kept(z.record(z.string(), z.string())),
  // What a runner keeps of its own options (caps.keeps): headless its turn limit and all of these, a terminal most.
  max_turns: kept(z.number().int()),
  max_budget_usd: kept(z.number()),
  system_prompt: kept(z.string()),
  fallback_model: kept(z.string().min(1)),
  strict_mcp_config: kept(z.boolean()),
  setting_sources: kept(z.array(z.enum(SETTING_SOURCES))),
  output_schema: kept(z.record(z.string(), json)),
  // Claude's own, on every backend that honours them (runners' caps.keeps).
  effort: kept(z.enum(EFFORTS)),
  agents: kept(
    z.record(
      z.string(),
      z.object({
        description: z.string(),
        prompt: z.string(),
        tools: z.array(z.string()).optional(),
        disallowed_tools: z.array(z.string()).optional(),
        model: z.string().optional(),
      }),
    ),
  ),
  agent: kept(z.string().min(1)),
  tools: kept(z.array(z.string())),
  betas: kept(z.array(z.enum(["context-1m-2025-08-07"]))),
  debug: kept(z.boolean()),
});

export type StoredOptions = z.infer<typeof StoredOptionsSchema>;
