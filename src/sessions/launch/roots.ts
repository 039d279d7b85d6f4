/**
 * Where sessions may work: the operator's CLAUDE_SESSIONS_ROOTS binds every caller (MCP over stdio and HTTP, the web
 * page, the CLI, member tools, warm spares taken for a call, resumes and forks); a client that declares MCP roots
 * is confined to the intersection with them. Checked on real paths, so a symbolic link out of a root is refused.
 */
import { realpath } from "node:fs/promises";
import type { Config } from "../../config.js";
import { ROOTS_ENV } from "../../config.js";
import type { CallContext } from "../../core/context.js";
import { SessionError } from "../../core/errors.js";
import { withinAny } from "../../util/fs/root-list.js";
import { checkCwd } from "../checks.js";

/** Throws PERMISSION_DENIED when one of `dirs` ([path, what]) lies outside the operator's or the client's roots. */
export async function assertInRoots(
  cfg: Pick<Config, "roots">,
  ctx: CallContext,
  dirs: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  const client = ctx.roots ? await clientRoots(ctx.roots) : undefined;
  if (!cfg.roots.length && !client) return;
  for (const [dir, what] of dirs) {
    const real = await realpath(dir).catch(() => undefined);
    if (real === undefined)
      throw new SessionError("INVALID_ARGUMENT", `${what} ${JSON.stringify(dir)} is not an existing directory.`);
    if (cfg.roots.length && !withinAny(cfg.roots, real)) {
      throw new SessionError(
        "PERMISSION_DENIED",
        `${what} ${JSON.stringify(dir)} is outside the directories sessions may work in; nothing was started.`,
        {
          suggestion: `Choose a folder inside ${cfg.roots.join(", ")} (the operator's ${ROOTS_ENV}).`,
          details: { roots: cfg.roots },
        },
      );
    }
    if (client && !withinAny(client, real)) {
      throw new SessionError(
        "PERMISSION_DENIED",
        `${what} ${JSON.stringify(dir)} is outside the roots your MCP client declared; nothing was started.`,
        {
          suggestion: client.length
            ? `Choose a folder inside ${client.join(", ")}, or add a root in the client.`
            : "The client declared no usable roots.",
          details: { client_roots: [...client] },
        },
      );
    }
  }
}

async function clientRoots(get: NonNullable<CallContext["roots"]>): Promise<readonly string[] | undefined> {
  try {
    return await get();
  } catch (e) {
    throw new SessionError(
      "PERMISSION_DENIED",
      `the roots your MCP client declared could not be read (${e instanceof Error ? e.message : String(e)}); nothing was started.`,
      {
        suggestion: "Retry; if it persists, the client's roots/list handler is failing.",
      },
    );
  }
}

/** A start's cwd and add_dirs, checked before a warm spare (made without a caller) is handed to it. */
export async function assertStartInRoots(
  cfg: Pick<Config, "roots">,
  ctx: CallContext,
  input: { cwd: string; add_dirs?: readonly string[] | undefined },
): Promise<void> {
  if (!cfg.roots.length && !ctx.roots) return;
  const dirs: Array<readonly [string, string]> = [[await checkCwd(input.cwd), "cwd"]];
  for (const a of input.add_dirs ?? []) dirs.push([await checkCwd(a, "add_dirs"), "add_dirs entry"]);
  await assertInRoots(cfg, ctx, dirs);
}
