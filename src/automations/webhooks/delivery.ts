/**
 * Sends webhook events. Each endpoint has its own queue and at most a few requests in flight, so a slow or failing
 * endpoint never delays a session (publishing is synchronous and returns at once) or another endpoint. A try is a
 * POST of the JSON body, signed (sign.ts), with the endpoint's time limit; anything but a 2xx is retried with
 * exponential back-off and jitter up to the endpoint's attempts, then the delivery goes to the dead letter.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../../util/log.js";
import type { Endpoint, WebhookEvent } from "./config.js";
import { appendDeadLetter, endpointKey } from "./dead-letter.js";
import { SIGNATURE_HEADER, signatureOf } from "./sign.js";
import type { WebhookNotice } from "./events.js";

/** Requests in flight per endpoint, and deliveries waiting behind them (beyond: straight to the dead letter). */
const IN_FLIGHT = 4;
const QUEUE_MAX = 1_000;

export interface Delivery {
  id: string;
  event: WebhookEvent;
  at: string;
  body: string;
}

export interface DeliveryResult {
  ok: boolean;
  status?: number;
  error?: string;
}

/** One POST: a 2xx is delivered; a time-out, a refused connection or another status is not. */
export async function postOnce(ep: Endpoint, d: Delivery, now = Date.now(), stop?: AbortSignal): Promise<DeliveryResult> {
  try {
    const res = await fetch(ep.url, {
      method: "POST",
      body: d.body,
      redirect: "manual",
      signal: stop ? AbortSignal.any([AbortSignal.timeout(ep.timeoutMs), stop]) : AbortSignal.timeout(ep.timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "claude-sessions-webhooks",
        "x-claude-sessions-event": d.event,
        "x-claude-sessions-delivery": d.id,
        [SIGNATURE_HEADER]: signatureOf(ep.secret, d.body, Math.floor(now / 1000)),
      },
    });
    await res.body?.cancel().catch(() => {});
    return res.status >= 200 && res.status < 300
      ? { ok: true, status: res.status }
      : { ok: false, status: res.status, error: `HTTP ${res.status}` };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    if (stop?.aborted) return { ok: false, error: "the server stopped during the try" };
    return {
      ok: false,
      error: err.name === "TimeoutError" ? `no answer within ${ep.timeoutMs} ms` : (err.cause?.code ?? err.message),
    };
  }
}

/** The wait before try `n + 1` (n ≥ 1): base × 2^(n−1), capped, with equal jitter (half fixed, half random). */
export function backoffMs(ep: Endpoint, n: number, random = Math.random): number {
  const d = Math.min(ep.retry.maxMs, ep.retry.baseMs * 2 ** (n - 1));
  return Math.round(d / 2 + (random() * d) / 2);
}

class EndpointQueue {
  private readonly waiting: Delivery[] = [];
  private active = 0;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly wakers = new Set<() => void>();
  /** Aborts the tries in flight when the server stops (their deliveries go to the dead letter). */
  private readonly stop = new AbortController();
  private idleWaiters: Array<() => void> = [];
  deadCount = 0;

  constructor(
    readonly ep: Endpoint,
    private readonly stateDir: string,
    private readonly log: Logger,
    private readonly onDone?: (ep: Endpoint, d: Delivery, r: DeliveryResult & { attempts: number }) => void,
  ) {}

  push(d: Delivery): void {
    if (this.closed) return;
    if (this.waiting.length >= QUEUE_MAX) {
      void this.dead(d, 0, "the endpoint's queue was full");
      return;
    }
    this.waiting.push(d);
    this.pump();
  }

  get pending(): number {
    return this.waiting.length + this.active;
  }

  private pump(): void {
    while (this.active < IN_FLIGHT && this.waiting.length) {
      const d = this.waiting.shift()!;
      this.active++;
      void this.deliver(d).finally(() => {
        this.active--;
        this.pump();
        if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  private async deliver(d: Delivery): Promise<void> {
    let last: DeliveryResult = { ok: false, error: "not tried" };
    let tried = 0;
    for (let n = 1; n <= this.ep.retry.attempts; n++) {
      tried = n;
      last = await postOnce(this.ep, d, Date.now(), this.stop.signal);
      if (last.ok) {
        this.onDone?.(this.ep, d, { ...last, attempts: n });
        return;
      }
      if (this.closed || n === this.ep.retry.attempts) break;
      this.log.debug(`webhook ${d.event} to ${new URL(this.ep.url).origin}: try ${n} failed (${last.error}); retrying`);
      await new Promise<void>((res) => {
        const t = setTimeout(
          () => {
            this.timers.delete(t);
            this.wakers.delete(res);
            res();
          },
          backoffMs(this.ep, n),
        );
        t.unref();
        this.timers.add(t);
        this.wakers.add(res);
      });
    }
    this.onDone?.(this.ep, d, { ...last, attempts: tried });
    await this.dead(d, tried, last.error ?? "failed");
  }

  private async dead(d: Delivery, attempts: number, error: string): Promise<void> {
    this.deadCount++;
    this.log.warn(
      `webhook ${d.event} to ${new URL(this.ep.url).origin} not delivered after ${attempts} tries (${error}): written to the dead letter`,
    );
    await appendDeadLetter(this.stateDir, {
      id: `${d.id}:${endpointKey(this.ep.url)}`,
      event: d.event,
      at: d.at,
      failed_at: new Date().toISOString(),
      endpoint: endpointKey(this.ep.url),
      origin: new URL(this.ep.url).origin,
      attempts,
      error,
      body: d.body,
    }).catch((e: unknown) => this.log.error(`webhook dead letter not written: ${String(e)}`));
  }

  idle(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((res) => this.idleWaiters.push(res));
  }

  /** Stops retrying: what waits and what was between tries goes to the dead letter (a replay sends it later). */
  async close(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    for (const t of this.timers) clearTimeout(t);
    for (const w of this.wakers) w();
    await Promise.all(this.waiting.splice(0).map((d) => this.dead(d, 0, "the server stopped first")));
  }
}

export class Webhooks {
  private readonly queues: EndpointQueue[];

  constructor(
    endpoints: readonly Endpoint[],
    stateDir: string,
    log: Logger,
    onDone?: (ep: Endpoint, d: Delivery, r: DeliveryResult & { attempts: number }) => void,
  ) {
    this.queues = endpoints.map((ep) => new EndpointQueue(ep, stateDir, log, onDone));
  }

  get endpoints(): number {
    return this.queues.length;
  }

  /** Deliveries that went to the dead letter since this server started. */
  get dead(): number {
    return this.queues.reduce((n, q) => n + q.deadCount, 0);
  }

  /** Queues the event for every endpoint that subscribed to it; returns at once. */
  publish(n: WebhookNotice, at = new Date()): void {
    const id = randomUUID();
    for (const q of this.queues) {
      if (!q.ep.events.has(n.event)) continue;
      const body = JSON.stringify({
        id,
        event: n.event,
        at: at.toISOString(),
        ...n.fields,
        ...(q.ep.includeText && n.text ? n.text : {}),
      });
      q.push({ id, event: n.event, at: at.toISOString(), body });
    }
  }

  /** Resolves when every queue is empty (tests, a drain at shutdown). */
  async idle(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.idle()));
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
    await this.idle();
  }
}
