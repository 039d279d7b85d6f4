import { configureInput, configureOutput, type ConfigureInput, type ConfigureOutput } from "../../api/index.js";
import type { Config } from "../../config.js";
import { SessionError } from "../../core/errors.js";
import type { SessionService } from "../../sessions/service.js";
import { defineTool } from "../tool.js";

const SECRET = /token|secret|password|passwd|api_?key|credential/i;

/** The effective settings, flat, with anything that looks like a secret shown as "[redacted]". */
export function effectiveConfig(cfg: Config): ConfigureOutput["config"] {
  const out: ConfigureOutput["config"] = {};
  for (const [k, v] of Object.entries(cfg).sort(([a], [b]) => a.localeCompare(b))) {
    if (v === undefined) continue;
    out[k] = SECRET.test(k)
      ? "[redacted]"
      : typeof v === "string" || typeof v === "number" || typeof v === "boolean"
        ? v
        : JSON.stringify(v);
  }
  return out;
}

async function configure(svc: SessionService, args: ConfigureInput): Promise<ConfigureOutput> {
  const cfg = svc.deps.cfg;
  if (args.action === "get_config") return { config: effectiveConfig(cfg), changed: false };
  if (!cfg.allowConfigure) {
    throw new SessionError(
      "PERMISSION_DENIED",
      "changing settings at run time needs the operator's permission (the server's CLAUDE_SESSIONS_ALLOW_CONFIGURE=1).",
      {
        suggestion:
          "Ask the operator to restart the server with CLAUDE_SESSIONS_ALLOW_CONFIGURE=1, or with the setting itself (CLAUDE_SESSIONS_ALLOW_BYPASS).",
      },
    );
  }
  const allow = args.action === "enable_bypass" ? true : args.action === "disable_bypass" ? false : args.allow_bypass_permissions;
  if (allow === undefined) {
    throw new SessionError("INVALID_ARGUMENT", "set_bypass_permissions needs allow_bypass_permissions (true or false).", {
      suggestion: "Pass allow_bypass_permissions, or use action enable_bypass / disable_bypass.",
    });
  }
  if (
    args.action !== "set_bypass_permissions" &&
    args.allow_bypass_permissions !== undefined &&
    args.allow_bypass_permissions !== allow
  ) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${args.action} contradicts allow_bypass_permissions: ${String(args.allow_bypass_permissions)}.`,
    );
  }
  const changed = svc.setAllowBypass(allow);
  svc.deps.log.warn(`configure: permission bypass is now ${cfg.allowBypassPermissions ? "allowed" : "refused"} for new sessions`);
  return { config: effectiveConfig(cfg), changed };
}

export const configureTool = defineTool({
  name: "configure",
  title: "Read or change the server's settings",
  description:
    "get_config: the effective settings (secrets redacted). set_bypass_permissions (or enable_bypass / disable_bypass): " +
    "whether new sessions may use bypassPermissions (needs CLAUDE_SESSIONS_ALLOW_CONFIGURE=1).",
  input: configureInput,
  output: configureOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  toolset: "admin",
  route: "local",
  handler: configure,
});
