/**
 * The page's fan-out form (issue 34): fan_out itself through callTool, in a folder the page may start sessions in
 * (CLAUDE_SESSIONS_WEB_ROOTS, as the start form). The answer is a stream of JSON lines: one
 * `{"progress": {progress, total, message}}` per progress notification fan_out sends (an attempt ended, a worktree
 * checked), then `{"result": <fan_out's result>}` or `{"error": {code, message, suggestion}}`. A refusal before
 * anything starts (the body, the folder) is a plain JSON error with its status, as every other control.
 */
import type { ServerResponse } from "node:http";
import { z } from "zod";
import { toSessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { callTool } from "../call.js";
import type { CallRouter } from "../tool.js";
import { fanOutTool } from "../tools/fan-out.js";
import { allowedCwd } from "./work.js";

/** What the form may set: the folder, the prompt, n or a list of models, the permission mode, the deadline and trust. */
const fanOutBody = z.strictObject({
  cwd: z.string().max(4096),
  prompt: z.string(),
  n: z.number().int().optional(),
  models: z.array(z.string().max(200)).max(64).optional(),
  permission_mode: z.string().optional(),
  timeout_ms: z.number().int().optional(),
  // The worktrees are new folders Claude Code has no trust record for: fan_out's own trust_workspace (the operator's gate applies).
  trust_workspace: z.boolean().optional(),
});

/** Checks the body and the folder (throws before anything is made); returns the run that streams the answer. */
export async function fanOutFromPage(
  svc: SessionService,
  roots: readonly string[],
  body: Record<string, unknown>,
  actor: string,
  router?: CallRouter,
): Promise<(res: ServerResponse, headers: Record<string, string>) => Promise<void>> {
  const b = fanOutBody.parse(body);
  const cwd = await allowedCwd(roots, b.cwd, false);
  const models = (b.models ?? []).map((m) => m.trim()).filter(Boolean);
  const args = {
    cwd,
    prompt: b.prompt,
    ...(models.length ? { variants: models.map((model) => ({ model })) } : b.n !== undefined ? { n: b.n } : {}),
    ...(b.permission_mode ? { permission_mode: b.permission_mode } : {}),
    ...(b.timeout_ms !== undefined ? { timeout_ms: b.timeout_ms } : {}),
    ...(b.trust_workspace ? { trust_workspace: true } : {}),
  };
  return async (res, headers) => {
    res.writeHead(200, { ...headers, "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store" });
    const line = (v: unknown) => res.write(`${JSON.stringify(v)}\n`);
    try {
      const r = await callTool(
        svc,
        fanOutTool,
        args,
        { actor, progress: (p) => line({ progress: p }) },
        router ? { router } : {},
      );
      line({ result: r });
    } catch (e) {
      line({ error: toSessionError(e).toBody() });
    }
    res.end();
  };
}
