/**
 * How a launcher masks its child's secrets (sandbox/secrets.ts decides which): the API key becomes a sentinel the
 * launcher's request guard puts back on requests to the API (headers only); a secret with hosts listed for it is the
 * sandbox runtime's (`credentials.envVars`, mode mask: it substitutes over verified TLS at those hosts, headers and
 * bodies); a secret with none becomes a sentinel nothing ever puts back. Inside, every one of them reads as a
 * sentinel; the real values stay in the launcher.
 */
import { randomUUID } from "node:crypto";
import type { ApiKeyMask, MaskedSecret } from "./guard.js";
import { covers, parseHost, type HostPattern } from "./hosts.js";
import { API_KEY_VARS, hostsFor, secretNames, type SecretsSpec } from "./secrets.js";

export interface MaskPlan {
  /** The child's environment with the API keys and the unlisted secrets replaced (the runtime replaces the rest). */
  env: Record<string, string>;
  keys: ApiKeyMask[];
  /** For the runtime: name and the hosts (without ports: the runtime matches hosts; the guard checks ports). */
  runtime: Array<{ name: string; mode: "mask"; injectHosts: string[] }>;
  /** The runtime's secrets with their full host patterns (their sentinels are known once the command is wrapped). */
  listed: Array<{ name: string; hosts: string[] }>;
  /** Secrets no host may receive: their own sentinels. */
  unlisted: MaskedSecret[];
}

function pattern(h: string): HostPattern | undefined {
  const p = parseHost(h);
  return typeof p === "string" ? undefined : p;
}

export function planMasks(env: Record<string, string>, s: SecretsSpec, allowHosts: readonly string[]): MaskPlan {
  const out: MaskPlan = { env: { ...env }, keys: [], runtime: [], listed: [], unlisted: [] };
  for (const name of API_KEY_VARS) {
    const real = env[name];
    if (!real) continue;
    const sentinel = `sk-ant-sandbox-${randomUUID()}`;
    out.env[name] = sentinel;
    out.keys.push({ name, sentinel, real });
  }
  const allowed = allowHosts.map(pattern).filter((p): p is HostPattern => p !== undefined);
  for (const name of secretNames(env, s)) {
    // Only hosts the session may reach: the runtime refuses an inject host its allowlist does not cover.
    const hosts = (hostsFor(name, s.rules) ?? []).filter((h) => {
      const p = pattern(h);
      return p !== undefined && allowed.some((a) => covers({ host: a.host }, { host: p.host }));
    });
    if (hosts.length) {
      out.runtime.push({ name, mode: "mask", injectHosts: [...new Set(hosts.map((h) => h.replace(/:\d+$/, "")))] });
      out.listed.push({ name, hosts });
    } else {
      const sentinel = `fake_value_${randomUUID().replace(/-/g, "")}`;
      out.env[name] = sentinel;
      out.unlisted.push({ name, sentinel, hosts: [] });
    }
  }
  return out;
}
