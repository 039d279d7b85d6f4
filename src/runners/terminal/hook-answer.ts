/**
 * Answering a permission request through the session's blocking PermissionRequest hook (the permission channel):
 * the server writes the decision the hook prints (`<decisions>/<request key>.json`, whole, 0600), the hook prints
 * it and removes it, Claude applies it ("Allowed by PermissionRequest hook"). No keys, no dialog digits. When the
 * hook already gave up (cs:permission_fallback) the caller answers the on-screen dialog by keys instead.
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import type { PendingPermission } from "../../events/reducer.js";
import { writeFileWhole } from "../../util/fs/atomic.js";
import type { DriverSession, PermissionAnswer } from "../driver.js";

/** How long the hook may take to notice the decision file (it polls every 20–100 ms). */
const HOOK_TAKES_MS = 5000;
/** The keys the permission hook makes: `r<pid>x<clock digits>`. */
const REQUEST_KEY = /^r[0-9]+x[0-9A-Za-z]{1,40}$/;

/** The hook's output for this answer (the CLI's PermissionRequest decision schema, 2.1.330). */
export function hookDecision(p: PendingPermission, a: PermissionAnswer): object {
  let decision: Record<string, unknown>;
  if (a.decision === "deny") {
    decision = { behavior: "deny", ...(a.message !== undefined ? { message: a.message } : {}) };
  } else {
    if (a.message !== undefined) {
      throw new SessionError(
        "INVALID_ARGUMENT",
        "message goes with deny only: Claude Code's allow decision carries no message.",
        {
          suggestion: "Leave out message, or put the note in your next prompt.",
        },
      );
    }
    decision = { behavior: "allow", ...(a.updated_input !== undefined ? { updatedInput: a.updated_input } : {}) };
    if (a.decision === "allow_always") {
      if (!p.suggestions?.length) {
        throw new SessionError(
          "INVALID_ARGUMENT",
          `Claude suggested no permission rule for this ${p.tool_name} request, so there is nothing to allow always.`,
          {
            suggestion: "Answer with decision allow (this request only).",
          },
        );
      }
      decision.updatedPermissions = p.suggestions;
    }
  }
  return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision } };
}

/** The request can be answered through its hook: a hook is waiting for it (it has a key and has not given up). */
export function hookWaits(p: PendingPermission | undefined): p is PendingPermission & { request: string } {
  return p !== undefined && p.request !== undefined && !p.fallback && REQUEST_KEY.test(p.request);
}

/**
 * Writes the decision for the pending request and waits until its hook took it. Resolves true once taken (the
 * session is marked busy: Claude runs the tool or tells the model of the denial, and no hook says so before the
 * tool ends), false when the hook gave up first (the caller answers by keys).
 */
export async function answerByHook(
  s: DriverSession,
  decisionsDir: string,
  p: PendingPermission & { request: string },
  a: PermissionAnswer,
  ctx: CallContext,
): Promise<boolean> {
  const output = JSON.stringify(hookDecision(p, a));
  await mkdir(decisionsDir, { recursive: true, mode: 0o700 });
  const file = join(decisionsDir, `${p.request}.json`);
  await writeFileWhole(file, output + "\n", 0o600);
  const same = () => s.live.fold.pending_permission?.seq === p.seq;
  let taken = false;
  await s.live.waitFor((f) => taken || f.pending_permission?.seq !== p.seq || f.pending_permission.fallback === true, {
    timeoutMs: HOOK_TAKES_MS,
    tickMs: 10,
    tick: async () => {
      taken = !(await stat(file).then(
        () => true,
        () => false,
      ));
    },
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  taken ||= !(await stat(file).then(
    () => true,
    () => false,
  ));
  if (taken) {
    if (same()) await s.emit({ hook_event_name: "cs:answered", permission_seq: p.seq });
    return true;
  }
  await rm(file, { force: true });
  if (!same()) return true; // answered otherwise (a person at the dialog, an interrupt): nothing left to do
  if (s.live.fold.pending_permission?.fallback) return false;
  throw new SessionError("TIMEOUT", `the permission hook of ${s.id} did not take the answer within ${HOOK_TAKES_MS / 1000} s.`, {
    suggestion: "Look at the session with stream_output mode screen; call respond_permission again.",
  });
}
