/** Schemas of the tools about the server itself: health_check and configure (issue #14). */
import { z } from "zod";

export const checkStatus = z.enum(["ok", "degraded", "down"]);

export const healthCheck = z.strictObject({
  name: z.string(),
  status: z
    .enum(["ok", "warn", "degraded", "down"])
    .describe("warn: works, but the detail says what to look at (it does not change the overall status)."),
  detail: z.string(),
});

export const healthInput = z.strictObject({});

export const healthOutput = z.strictObject({
  status: checkStatus.describe("down: no session can start; degraded: something is missing or unhealthy; ok: all checks pass."),
  checks: z.array(healthCheck),
  member_socket: z
    .strictObject({ path: z.string(), listening: z.boolean() })
    .optional()
    .describe("The Unix socket (0600) team members' own tools reach this server on; listening: it accepts a connection now."),
});

export const configureInput = z
  .object({
    action: z
      .enum(["get_config", "set_bypass_permissions", "enable_bypass", "disable_bypass"])
      .describe("enable_bypass / disable_bypass: set_bypass_permissions to true / false."),
    allow_bypass_permissions: z.boolean().optional().describe("For set_bypass_permissions: the new value."),
  })
  .strict();

export const configureOutput = z.strictObject({
  config: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .describe('The effective settings; secrets are shown as "[redacted]".'),
  changed: z.boolean(),
});
