/** Schemas of move_session (issue 36 item 3) and of transfer_session, the node-side steps a coordinator's move takes. */
import { z } from "zod";
import { nodeName, sessionId } from "./common.js";

export const moveInput = z
  .object({
    session_id: sessionId,
    node: nodeName.describe('Where it goes: a node of nodes.json, "local" (this machine) or "auto" (most room).'),
  })
  .strict();

export const moveOutput = z.object({
  session_id: z.string(),
  move_id: z.string(),
  from: z.string().describe('The node it left ("local": this machine).'),
  node: z.string().describe("The node it is on now; it is hibernated there and wakes on the next prompt."),
  status: z.literal("hibernated"),
  transcript_bytes: z.number().int(),
});

/** A move's id: the coordinator's, also the name of its journal file. */
export const moveId = z.string().regex(/^mv-[a-z0-9]{6,40}$/, "a move id is mv- and letters or digits");

/** A claude session id is a UUID (it names the transcript's file). */
const claudeSessionId = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

/** What travels: the record (the receiving node keeps only the fields it knows), the events' fold, the transcript. */
export const moveBundle = z.object({
  record: z.record(z.string(), z.unknown()),
  fold: z.record(z.string(), z.unknown()),
  claude_session_id: claudeSessionId,
  cwd: z.string().min(1).max(4096).startsWith("/"),
  transcript: z.string().max(64 * 1024 * 1024),
  seq: z.number().int(),
});

export const transferInput = z
  .object({
    op: z
      .enum(["export", "import", "release", "commit", "abort", "state"])
      .describe("export, release: on the source; import, commit, abort: on the target; state: either."),
    session_id: sessionId,
    move_id: moveId,
    seq: z.number().int().optional().describe("release: the events' count export saw (a session changed since is not released)."),
    bundle: moveBundle.optional().describe("import: what export returned."),
  })
  .strict();

export const transferOutput = z.object({
  session_id: z.string(),
  op: z.string(),
  /** state: whether this machine has the session, and whether it is a move's incoming copy (its move id). */
  present: z.boolean().optional(),
  incoming: z.string().optional(),
  bundle: moveBundle.optional(),
});
