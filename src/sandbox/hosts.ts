/**
 * The network allowlist of a sandboxed session, as host patterns the sandbox runtime's proxy matches:
 * `host`, `host:port`, `*.domain` (`*.domain:port`), an IPv4 literal (`127.0.0.1:8080`) or a bracketed IPv6 literal
 * (`[::1]:8080`). The operator's list (CLAUDE_SESSIONS_SANDBOX_HOSTS) is the widest a session gets; a caller may
 * only narrow it (`sandbox: {allow_hosts}`); the API's own host is always in (the session cannot work without it).
 */

export interface HostPattern {
  /** Lower-cased host, `*.domain`, an IPv4 literal or a bracketed IPv6 literal. */
  host: string;
  port?: number;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function validHost(h: string): boolean {
  if (h.startsWith("[") && h.endsWith("]")) return /^[0-9a-f:.]+$/.test(h.slice(1, -1)) && h.includes(":");
  const v4 = IPV4.exec(h);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255);
  const name = h.startsWith("*.") ? h.slice(2) : h;
  if (name.length > 253) return false;
  const labels = name.split(".");
  // A wildcard needs a real domain under it (`*.com` is refused: it allows a whole top-level domain).
  if (h.startsWith("*.") && labels.length < 2) return false;
  return labels.every((l) => LABEL.test(l));
}

/** One pattern, or an error text naming what is wrong. */
export function parseHost(raw: string): HostPattern | string {
  const s = raw.trim().toLowerCase();
  if (!s) return "an empty entry";
  let host = s;
  let port: number | undefined;
  const m = /^(\[[^\]]*\]|[^:[\]]+):(\d{1,5})$/.exec(s);
  if (m) {
    host = m[1]!;
    port = Number(m[2]);
    if (port < 1 || port > 65535) return `${JSON.stringify(raw)}: port out of range`;
  }
  if (!validHost(host)) return `${JSON.stringify(raw)} is not a host, host:port, *.domain or IP literal`;
  return port === undefined ? { host } : { host, port };
}

/** A comma list (or array) of patterns; throws an Error naming every bad entry. */
export function parseHosts(list: readonly string[], what: string): HostPattern[] {
  const out: HostPattern[] = [];
  const bad: string[] = [];
  for (const e of list) {
    const p = parseHost(e);
    if (typeof p === "string") bad.push(p);
    else out.push(p);
  }
  if (bad.length) throw new Error(`${what}: ${bad.join("; ")}`);
  return out;
}

export function formatHost(p: HostPattern): string {
  return p.port === undefined ? p.host : `${p.host}:${p.port}`;
}

function hostCovers(outer: string, inner: string): boolean {
  if (outer === inner) return true;
  if (outer.startsWith("*.")) {
    const dom = outer.slice(1); // ".domain"
    return inner.startsWith("*.") ? inner.slice(1).endsWith(dom) : inner.endsWith(dom);
  }
  return false;
}

/** Whether everything `inner` allows is allowed by `outer`. */
export function covers(outer: HostPattern, inner: HostPattern): boolean {
  if (outer.port !== undefined && outer.port !== inner.port) return false;
  return hostCovers(outer.host, inner.host);
}

/** The caller's narrowing of the operator's list: each entry must fall within one of the operator's; returns the ones that do not. */
export function widening(operator: readonly HostPattern[], caller: readonly HostPattern[]): HostPattern[] {
  return caller.filter((c) => !operator.some((o) => covers(o, c)));
}

/** The API's host:port from ANTHROPIC_BASE_URL (the server's own), else api.anthropic.com:443. */
export function apiHost(baseUrl: string | undefined): HostPattern {
  if (baseUrl) {
    try {
      const u = new URL(baseUrl);
      const port = u.port ? Number(u.port) : u.protocol === "http:" ? 80 : 443;
      const p = parseHost(`${u.hostname}:${port}`);
      if (typeof p !== "string") return p;
    } catch {
      // Not a URL: the CLI cannot use it either; the default host stays allowed.
    }
  }
  return { host: "api.anthropic.com", port: 443 };
}
