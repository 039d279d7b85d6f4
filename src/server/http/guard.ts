/**
 * Who may talk to the HTTP server: the bearer token (or the sign-in cookie the page got for it), from a Host
 * and Origin of the bound address (DNS rebinding), and, for the page's state-changing requests, a CSRF token.
 * Failed sign-ins of one address back off (each further request waits a little longer, up to 2 s).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { sameSecret } from "./token.js";

export const COOKIE = "cs_session";
const COOKIE_TTL_MS = 7 * 86_400_000;
const FREE_FAILURES = 5;
const MAX_BACKOFF_MS = 2_000;

export type Verdict = { ok: true; via: "bearer" | "cookie"; csrf?: string } | { ok: false; status: 401 | 403; why: string };

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

export class Guard {
  private readonly hosts = new Set<string>();
  private readonly anyHost: boolean;
  private readonly cookies = new Map<string, { csrf: string; expires: number }>();
  private readonly failures = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly token: string,
    bindHost: string,
    port: number,
  ) {
    this.anyHost = bindHost === "0.0.0.0" || bindHost === "::";
    const names = isLoopback(bindHost) ? ["127.0.0.1", "localhost", "[::1]"] : [isIP(bindHost) === 6 ? `[${bindHost}]` : bindHost];
    for (const n of names) this.hosts.add(`${n}:${port}`.toLowerCase());
  }

  /** Host must name the bound address; Origin, when sent, must be this very origin (http or https). */
  checkOrigin(req: IncomingMessage): string | undefined {
    const host = (req.headers.host ?? "").toLowerCase();
    if (!host) return "the request has no Host header";
    if (!this.anyHost && !this.hosts.has(host)) return `Host ${JSON.stringify(host)} is not this server's address`;
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== "null") {
      let o: URL | undefined;
      try {
        o = new URL(origin);
      } catch {
        /* refused below */
      }
      if (!o || (o.protocol !== "http:" && o.protocol !== "https:") || o.host.toLowerCase() !== host) return `Origin ${JSON.stringify(origin)} is not this server`;
    } else if (origin === "null") return "Origin null is refused";
    return undefined;
  }

  /** Waits out the back-off of this address (a short delay after repeated failures). */
  async backoff(addr: string): Promise<void> {
    const f = this.failures.get(addr);
    const wait = f ? f.until - Date.now() : 0;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  authenticate(req: IncomingMessage): Verdict {
    const addr = req.socket.remoteAddress ?? "?";
    const auth = req.headers.authorization;
    if (auth !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (m && sameSecret(m[1]!, this.token)) return this.succeeded(addr, { ok: true, via: "bearer" });
      return this.failed(addr, "wrong bearer token");
    }
    const sid = cookieOf(req, COOKIE);
    const c = sid ? this.cookies.get(sid) : undefined;
    if (c && c.expires > Date.now()) return { ok: true, via: "cookie", csrf: c.csrf };
    return { ok: false, status: 401, why: sid ? "the sign-in expired" : "no bearer token" };
  }

  /** The page's sign-in: the token in exchange for a cookie (and its CSRF token). */
  signIn(req: IncomingMessage, given: string): { cookie: string; csrf: string } | undefined {
    const addr = req.socket.remoteAddress ?? "?";
    if (!sameSecret(given, this.token)) {
      this.failed(addr, "wrong token");
      return undefined;
    }
    this.failures.delete(addr);
    const sid = randomBytes(32).toString("base64url");
    const csrf = randomBytes(24).toString("base64url");
    this.cookies.set(sid, { csrf, expires: Date.now() + COOKIE_TTL_MS });
    return { cookie: `${COOKIE}=${sid}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${COOKIE_TTL_MS / 1000}`, csrf };
  }

  signOut(req: IncomingMessage): void {
    const sid = cookieOf(req, COOKIE);
    if (sid) this.cookies.delete(sid);
  }

  /** A state-changing request of the page carries its CSRF token in a header a cross-site form cannot set. */
  csrfOk(req: IncomingMessage, v: Verdict): boolean {
    if (!v.ok) return false;
    if (v.via === "bearer") return true;
    const h = req.headers["x-csrf-token"];
    return typeof h === "string" && v.csrf !== undefined && sameSecret(h, v.csrf);
  }

  private succeeded(addr: string, v: Verdict): Verdict {
    this.failures.delete(addr);
    return v;
  }

  private failed(addr: string, why: string): Verdict {
    const f = this.failures.get(addr) ?? { count: 0, until: 0 };
    f.count++;
    if (f.count > FREE_FAILURES) f.until = Date.now() + Math.min(MAX_BACKOFF_MS, 50 * 2 ** (f.count - FREE_FAILURES));
    this.failures.set(addr, f);
    if (this.failures.size > 10_000) this.failures.clear();
    return { ok: false, status: 401, why };
  }
}

export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
