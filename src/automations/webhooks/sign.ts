/**
 * The signature of a webhook delivery, Stripe-style: `X-Claude-Sessions-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256(secret, "<t>.<raw body>")>`. The time is inside the signed text, so a receiver rejects replays by age.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "X-Claude-Sessions-Signature";

export function signatureOf(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${v1}`;
}

/** What a receiver does (docs/automations.md): true when `header` signs `body` and is at most `toleranceS` old. */
export function verifySignature(
  secret: string,
  body: string,
  header: string,
  nowS = Math.floor(Date.now() / 1000),
  toleranceS = 300,
): boolean {
  const parts = new Map(header.split(",").map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)] as const));
  const t = Number(parts.get("t"));
  const v1 = parts.get("v1") ?? "";
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const want = Buffer.from(signatureOf(secret, body, t).split("v1=")[1]!, "hex");
  const got = Buffer.from(v1, "hex");
  return got.length === want.length && timingSafeEqual(got, want);
}
