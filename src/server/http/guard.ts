/**
 * Who may talk to the HTTP server: the bearer token (or the sign-in cookie the page got for it), from a Host
 * and Origin of the bound address (DNS rebinding), and, for the page's state-changing requests, a CSRF token.
 * A wrong token (bearer or sign-in) is answered late: after 5 from one address, each further wrong one waits a
 * little longer (up to 2 s) before its 401. Only failing requests wait: one with the right credential is answered
 * at once, however many wrong ones its address sent. An address's failures are forgotten 15 minutes after its last.
 * The back-off alone would not limit guesses sent in parallel (each waits, all are checked), so while 4 wrong tokens
 * of an address wait out their back-off, no further token from it is even compared: 429 at once, with Retry-After.
 * (A right client sharing the address, as every local process shares 127.0.0.1, waits those seconds too: checking
 * its token would tell a guesser which guess was right.)
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { sameSecret } from "./token.js";

export const COOKIE = "cs_session";
const COOKIE_TTL_MS = 7 * 86_400_000;
const FREE_FAILURES = 5;
const MAX_BACKOFF_MS = 2_000;
const FORGET_MS = 15 * 60_000;
/** Wrong tokens of one address waiting out their back-off at once; more are not compared. */
const MAX_WAITING = 4;
export const RETRY_AFTER_S = 2;

/**
 * `actor` names who is signed in for the audit log: `web:bearer` for the token itself, `web:<8 hex>` for a page
 * sign-in (a random id of its own, not derived from the cookie or the token).
 */
export type Verdict =
  { ok: true; via: "bearer" | "cookie"; csrf?: string; actor: string } | { ok: false; status: 401 | 403 | 429; why: string };

const TOO_MANY = `too many wrong tokens from this address are still being answered; try again in ${RETRY_AFTER_S} s`;

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

export class Guard {
  private readonly hosts = new Set<string>();
  private readonly anyHost: boolean;
  private readonly cookies = new Map<string, { csrf: string; expires: number; id: string }>();
  private readonly failures = new Map<string, { count: number; last: number }>();
  /** Per address: its wrong tokens now waiting out their back-off. */
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly token: string,
    bindHost: string,
    port: number,
  ) {
    this.anyHost = bindHost === "0.0.0.0" || bindHost === "::";
    const names = isLoopback(bindHost)
      ? ["127.0.0.1", "localhost", "[::1]"]
      : [isIP(bindHost) === 6 ? `[${bindHost}]` : bindHost];
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
      if (!o || (o.protocol !== "http:" && o.protocol !== "https:") || o.host.toLowerCase() !== host)
        return `Origin ${JSON.stringify(origin)} is not this server`;
    } else if (origin === "null") return "Origin null is refused";
    return undefined;
  }

  /**
   * The bearer token, else the sign-in cookie. A wrong bearer token is a failure of this address and its 401 comes
   * after the back-off; the right one, a valid cookie and no credential at all are answered at once.
   */
  async authenticate(req: IncomingMessage): Promise<Verdict> {
    const auth = req.headers.authorization;
    if (auth !== undefined) {
      if (this.saturated(req)) return { ok: false, status: 429, why: TOO_MANY };
      const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (m && sameSecret(m[1]!, this.token)) return { ok: true, via: "bearer", actor: "web:bearer" };
      return this.failed(req, "wrong bearer token");
    }
    const sid = cookieOf(req, COOKIE);
    const c = sid ? this.cookies.get(sid) : undefined;
    if (c && c.expires > Date.now()) return { ok: true, via: "cookie", csrf: c.csrf, actor: `web:${c.id.slice(0, 8)}` };
    return { ok: false, status: 401, why: sid ? "the sign-in expired" : "no bearer token" };
  }

  /**
   * The page's sign-in: the token in exchange for a cookie (and its CSRF token); a wrong token waits out the back-off
   * ("wrong"), and none is compared while the address has too many waiting ("busy").
   */
  async signIn(req: IncomingMessage, given: string): Promise<{ cookie: string; csrf: string } | "wrong" | "busy"> {
    if (this.saturated(req)) return "busy";
    if (!sameSecret(given, this.token)) {
      await this.failed(req, "wrong token");
      return "wrong";
    }
    const sid = randomBytes(32).toString("base64url");
    const csrf = randomBytes(24).toString("base64url");
    this.cookies.set(sid, { csrf, expires: Date.now() + COOKIE_TTL_MS, id: randomBytes(8).toString("hex") });
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

  private saturated(req: IncomingMessage): boolean {
    return (this.waiting.get(req.socket.remoteAddress ?? "?") ?? 0) >= MAX_WAITING;
  }

  /**
   * Counts a wrong token of this address and resolves after its back-off. A success does not clear the count: every
   * local process shares 127.0.0.1, so a right client must not wipe the back-off of a guessing one.
   */
  private async failed(req: IncomingMessage, why: string): Promise<Verdict> {
    const addr = req.socket.remoteAddress ?? "?";
    const now = Date.now();
    let f = this.failures.get(addr);
    if (!f || now - f.last > FORGET_MS) f = { count: 0, last: now };
    f.count++;
    f.last = now;
    if (this.failures.size >= 10_000 && !this.failures.has(addr)) this.failures.clear();
    this.failures.set(addr, f);
    const wait = f.count > FREE_FAILURES ? Math.min(MAX_BACKOFF_MS, 50 * 2 ** (f.count - FREE_FAILURES)) : 0;
    if (wait > 0) {
      this.waiting.set(addr, (this.waiting.get(addr) ?? 0) + 1);
      try {
        await new Promise((r) => setTimeout(r, wait));
      } finally {
        const n = (this.waiting.get(addr) ?? 1) - 1;
        if (n > 0) this.waiting.set(addr, n);
        else this.waiting.delete(addr);
      }
    }
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
