/**
 * The operator's webhook endpoints (CLAUDE_SESSIONS_WEBHOOKS=<file>): never a tool argument. The file must be the
 * server user's and 0600 (it holds secrets); every URL https, or http to a loopback address; a secret inline or
 * `{"env": "NAME"}`. A bad file stops the server with the reason (like the price and nodes files).
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { z } from "zod";
import { SessionError } from "../../core/errors.js";

export const WEBHOOK_EVENTS = [
  "turn.ended",
  "session.needs_you",
  "session.limited",
  "session.died",
  "schedule.finished",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Whether a name read back from a file (the dead letter) is one of the events. */
export function isWebhookEvent(name: string): name is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(name);
}

const secretSpec = z.union([
  z.string().min(16, "a secret of at least 16 characters"),
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable's name") }),
]);

const endpointSchema = z.strictObject({
  url: z.string().url(),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1),
  secret: secretSpec,
  /** The prompt's and the reply's text, a permission's tool input, a screen's text: only when asked. */
  include_text: z.boolean().default(false),
  /** One try's time limit. */
  timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  retry: z
    .strictObject({
      attempts: z.number().int().min(1).max(20).default(6),
      base_ms: z.number().int().min(10).max(60_000).default(1_000),
      max_ms: z.number().int().min(10).max(3_600_000).default(60_000),
    })
    .default({ attempts: 6, base_ms: 1_000, max_ms: 60_000 }),
});

const fileSchema = z.strictObject({ endpoints: z.array(endpointSchema).max(50) });

export interface Endpoint {
  /** `url` without its query (for logs and the dead letter's listing). */
  name: string;
  url: string;
  events: ReadonlySet<WebhookEvent>;
  secret: string;
  includeText: boolean;
  timeoutMs: number;
  retry: { attempts: number; baseMs: number; maxMs: number };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

function bad(file: string, why: string): SessionError {
  return new SessionError("INVALID_ARGUMENT", `CLAUDE_SESSIONS_WEBHOOKS (${file}): ${why}`, {
    suggestion: "Fix the webhooks file (docs/automations.md) and start the server again.",
  });
}

/**
 * The endpoints of `CLAUDE_SESSIONS_WEBHOOKS` (Config.webhooksFile; none when unset; `env` holds secrets named by
 * `{"env"}`). Throws INVALID_ARGUMENT naming what is wrong.
 */
export function loadWebhooks(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { file?: string; endpoints: Endpoint[] } {
  if (!file) return { endpoints: [] };
  if (!isAbsolute(file)) throw bad(file, "must be an absolute path");
  let st;
  try {
    st = statSync(file);
  } catch (e) {
    throw bad(file, `cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  if (!st.isFile()) throw bad(file, "is not a regular file");
  if (process.getuid && st.uid !== process.getuid()) throw bad(file, "belongs to another user");
  if ((st.mode & 0o077) !== 0)
    throw bad(file, `is readable or writable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw bad(file, `is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success)
    throw bad(file, parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; "));
  return {
    file,
    endpoints: parsed.data.endpoints.map((e, i) => {
      const u = new URL(e.url);
      if (u.protocol !== "https:" && !(u.protocol === "http:" && LOOPBACK.test(u.hostname)))
        throw bad(file, `endpoints.${i}.url: must be https (plain http only to a loopback address)`);
      if (u.username || u.password)
        throw bad(file, `endpoints.${i}.url: credentials in the URL are not allowed (use the secret)`);
      let secret: string;
      if (typeof e.secret === "string") secret = e.secret;
      else {
        const v = env[e.secret.env];
        if (!v) throw bad(file, `endpoints.${i}.secret: the environment variable ${e.secret.env} is not set`);
        secret = v;
      }
      return {
        name: `${u.origin}${u.pathname}`,
        url: e.url,
        events: new Set(e.events),
        secret,
        includeText: e.include_text,
        timeoutMs: e.timeout_ms,
        retry: { attempts: e.retry.attempts, baseMs: e.retry.base_ms, maxMs: e.retry.max_ms },
      };
    }),
  };
}
