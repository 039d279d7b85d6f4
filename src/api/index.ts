/**
 * The public surface, typed once: the zod request and response schemas of every tool and the types inferred
 * from them. The MCP tools (src/server/tools), the session layer and the CLI all use these types, so a field
 * added here is checked end to end.
 */
import type { z } from "zod";
import type * as s from "./sessions.js";
import type * as t from "./turns.js";
import type * as rt from "./run-task.js";

export * from "./common.js";
export * from "./sessions.js";
export * from "./turns.js";
export * from "./headless.js";
export * from "./run-task.js";

export type StartInput = z.infer<typeof s.startInput>;
export type StartOutput = z.infer<typeof s.startOutput>;
export type ResumeInput = z.infer<typeof s.resumeInput>;
export type ResumeOutput = z.infer<typeof s.resumeOutput>;
export type KillInput = z.infer<typeof s.killInput>;
export type KillOutput = z.infer<typeof s.killOutput>;
export type ListInput = z.infer<typeof s.listInput>;
export type ListOutput = z.infer<typeof s.listOutput>;
export type SessionSummary = z.infer<typeof s.sessionSummary>;
export type SendInput = z.infer<typeof t.sendInput>;
export type SendOutput = z.infer<typeof t.sendOutput>;
export type WaitInput = z.infer<typeof t.waitInput>;
export type WaitOutput = z.infer<typeof t.waitOutput>;
export type PermissionDecision = z.infer<typeof t.permissionDecision>;
export type RespondInput = z.infer<typeof t.respondInput>;
export type RespondOutput = z.infer<typeof t.respondOutput>;
export type InterruptInput = z.infer<typeof t.interruptInput>;
export type InterruptOutput = z.infer<typeof t.interruptOutput>;
export type StreamInput = z.infer<typeof t.streamInput>;
export type StreamOutput = z.infer<typeof t.streamOutput>;
export type TranscriptItem = z.infer<typeof t.transcriptItem>;
export type RunTaskInput = z.infer<typeof rt.runTaskInput>;
export type RunTaskOutput = z.infer<typeof rt.runTaskOutput>;
