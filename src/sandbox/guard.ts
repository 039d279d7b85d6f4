/**
 * The launcher's look at every request its proxy parses (the sandbox runtime's `filterRequest`: plain HTTP, and HTTPS
 * it terminates): it puts the real API key in place of its sentinel on requests to the API's own host and port, and
 * finds the sentinels that go anywhere else. A masked secret's sentinel sent to a host that is not one of its own
 * goes out as it is (the proxy substitutes only at that secret's hosts) and is counted; one sent to its own host on
 * another port than the one listed is refused (the runtime matches hosts without ports) and counted.
 */
import type { FilterRequestCallback, RequestDecision } from "@anthropic-ai/sandbox-runtime";
import { hostMatches } from "./secrets.js";

/** A secret the runtime masks: its name, the sentinel the sandbox sees and the hosts it is injected at. */
export interface MaskedSecret {
  name: string;
  sentinel: string;
  hosts: string[];
}

/** The API key (or token) the guard itself puts back, only on requests to the API. */
export interface ApiKeyMask {
  name: string;
  sentinel: string;
  real: string;
}

export interface GuardOptions {
  secrets: readonly MaskedSecret[];
  keys: readonly ApiKeyMask[];
  api: { host: string; port: number; plaintext: boolean };
}

/** One sentinel seen where it does not belong (names and hosts only: never a value). */
export interface SecretViolation {
  name: string;
  target: string;
  /** sent: it went out with the sentinel; refused: the request was answered 403 and went nowhere. */
  action: "sent" | "refused";
  why: string;
}

/** Host-only match (how the runtime decides where it substitutes). */
function hostOnly(pattern: string, host: string): boolean {
  const p = pattern
    .replace(/:\d+$/, "")
    .replace(/^\[|\]$/g, "")
    .toLowerCase();
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return p.startsWith("*.") ? h.endsWith(p.slice(1)) : h === p;
}

export function requestGuard(o: GuardOptions, report: (v: SecretViolation) => void): FilterRequestCallback {
  return async (request, info) => {
    const url = new URL(request.url);
    const host = info?.target?.host ?? url.hostname;
    const port = info?.target?.port ?? (url.port ? Number(url.port) : url.protocol === "http:" ? 80 : 443);
    const target = `${host}:${port}`;
    const texts: Array<[string | undefined, string]> = [[undefined, info?.requestTarget ?? request.url]];
    request.headers.forEach((value, name) => texts.push([name, value]));
    const has = (s: string) => texts.some(([, t]) => t.includes(s));
    const decision: RequestDecision = { action: "allow" };
    for (const s of o.secrets) {
      if (!has(s.sentinel)) continue;
      const own = s.hosts.some((h) => hostMatches(h, host, port));
      if (own && info?.scheme === "http")
        report({ name: s.name, target, action: "sent", why: "plain HTTP: a secret is put back only over verified TLS" });
      else if (own) continue;
      else if (s.hosts.some((h) => hostOnly(h, host))) {
        report({ name: s.name, target, action: "refused", why: "not the port listed for it" });
        return {
          action: "deny",
          status: 403,
          reason: `claude-sessions sandbox: ${s.name} may not be sent to ${target} (not the port listed for it)`,
        };
      } else report({ name: s.name, target, action: "sent", why: "not a host listed for it" });
    }
    const atApi = host.toLowerCase() === o.api.host.toLowerCase() && port === o.api.port;
    // plaintext: the server allowed this API in cleartext (loopback, or the operator's CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API).
    const secure = info?.scheme === "https" || o.api.plaintext;
    const set: Array<[string, string]> = [];
    for (const k of o.keys) {
      if (!has(k.sentinel)) continue;
      if (!atApi || !secure) {
        report({
          name: k.name,
          target,
          action: "sent",
          why: atApi ? "plain HTTP to an API the operator did not allow in cleartext" : "not the API's host",
        });
        continue;
      }
      for (const [name, value] of texts)
        if (name && value.includes(k.sentinel)) set.push([name, value.split(k.sentinel).join(k.real)]);
    }
    if (set.length) decision.setHeaders = set;
    return decision;
  };
}
