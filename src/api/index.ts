/**
 * The public surface, typed once: the zod request and response schemas of every tool and the types inferred
 * from them. The MCP tools (src/server/tools), the session layer and the CLI all use these types, so a field
 * added here is checked end to end.
 */
import type { z } from "zod";
import type * as h from "./history.js";
import type * as s from "./sessions.js";
import type * as t from "./turns.js";
import type * as sv from "./server.js";
import type * as tm from "./teams.js";
import type * as rt from "./run-task.js";
import type * as mv from "./move.js";

export * from "./common.js";
export * from "./history.js";
export * from "./sessions.js";
export * from "./turns.js";
export * from "./server.js";
export * from "./teams.js";
export * from "./headless.js";
export * from "./run-task.js";
export * from "./schedules.js";

export type StartInput = z.infer<typeof s.startInput>;
export type StartOutput = z.infer<typeof s.startOutput>;
export type ResumeInput = z.infer<typeof s.resumeInput>;
export type ResumeOutput = z.infer<typeof s.resumeOutput>;
export type ResetInput = z.infer<typeof s.resetInput>;
export type ResetOutput = z.infer<typeof s.resetOutput>;
export type CompactInput = z.infer<typeof s.compactInput>;
export type CompactOutput = z.infer<typeof s.compactOutput>;
export type KillInput = z.infer<typeof s.killInput>;
export type KillOutput = z.infer<typeof s.killOutput>;
export type ListInput = z.infer<typeof s.listInput>;
export type ListOutput = z.infer<typeof s.listOutput>;
export type SessionSummary = z.infer<typeof s.sessionSummary>;
export type SessionMetricsView = z.infer<typeof s.sessionMetrics>;
export type SendInput = z.infer<typeof t.sendInput>;
export type SendOutput = z.infer<typeof t.sendOutput>;
export type WaitInput = z.infer<typeof t.waitInput>;
export type WaitOutput = z.infer<typeof t.waitOutput>;
export type PermissionDecision = z.infer<typeof t.permissionDecision>;
export type RespondInput = z.infer<typeof t.respondInput>;
export type RespondOutput = z.infer<typeof t.respondOutput>;
export type AnswerPromptInput = z.infer<typeof t.answerPromptInput>;
export type AnswerPromptOutput = z.infer<typeof t.answerPromptOutput>;
export type InterruptInput = z.infer<typeof t.interruptInput>;
export type InterruptOutput = z.infer<typeof t.interruptOutput>;
export type StreamInput = z.infer<typeof t.streamInput>;
export type StreamOutput = z.infer<typeof t.streamOutput>;
export type TranscriptItem = z.infer<typeof t.transcriptItem>;
export type HealthOutput = z.infer<typeof sv.healthOutput>;
export type HealthCheck = z.infer<typeof sv.healthCheck>;
export type ConfigureInput = z.infer<typeof sv.configureInput>;
export type ConfigureOutput = z.infer<typeof sv.configureOutput>;
export type HistoryUsage = z.infer<typeof h.historyUsage>;
export type ListConversationsInput = z.infer<typeof h.listConversationsInput>;
export type ListConversationsOutput = z.infer<typeof h.listConversationsOutput>;
export type GetConversationInput = z.infer<typeof h.getConversationInput>;
export type GetConversationOutput = z.infer<typeof h.getConversationOutput>;
export type SearchConversationsInput = z.infer<typeof h.searchConversationsInput>;
export type SearchConversationsOutput = z.infer<typeof h.searchConversationsOutput>;
export type GetExecutionsInput = z.infer<typeof h.getExecutionsInput>;
export type GetExecutionsOutput = z.infer<typeof h.getExecutionsOutput>;
export type ClearExecutionsInput = z.infer<typeof h.clearExecutionsInput>;
export type ClearExecutionsOutput = z.infer<typeof h.clearExecutionsOutput>;
export type BroadcastInput = z.infer<typeof tm.broadcastInput>;
export type BroadcastOutput = z.infer<typeof tm.broadcastOutput>;
export type MemberResult = z.infer<typeof tm.memberResult>;
export type WaitManyInput = z.infer<typeof tm.waitManyInput>;
export type WaitManyOutput = z.infer<typeof tm.waitManyOutput>;
export type SyncInput = z.infer<typeof tm.syncInput>;
export type SyncOutput = z.infer<typeof tm.syncOutput>;
export type SyncResult = z.infer<typeof tm.syncResult>;
/** A call whose session was named by team_name + teammate_name, after resolution: it has its session_id. */
export type Resolved<T extends { session_id?: string | undefined }> = Omit<T, "session_id" | "team_name" | "teammate_name"> & {
  session_id: string;
};
export type RunTaskInput = z.infer<typeof rt.runTaskInput>;
export type RunTaskOutput = z.infer<typeof rt.runTaskOutput>;

export * from "./attempts.js";
import type * as at from "./attempts.js";
export type FanOutInput = z.infer<typeof at.fanOutInput>;
export type FanOutOutput = z.infer<typeof at.fanOutOutput>;
export type AttemptResult = z.infer<typeof at.attemptResult>;
export type CheckResult = z.infer<typeof at.checkResult>;
export type MergeInput = z.infer<typeof at.mergeInput>;
export type MergeOutput = z.infer<typeof at.mergeOutput>;
export * from "./move.js";
export type MoveInput = z.infer<typeof mv.moveInput>;
export type MoveOutput = z.infer<typeof mv.moveOutput>;
export type TransferInput = z.infer<typeof mv.transferInput>;
export type TransferOutput = z.infer<typeof mv.transferOutput>;
export type MoveBundle = z.infer<typeof mv.moveBundle>;
