/**
 * Parked, then resumed once (issue 33). A turn that ends on a usage or rate limit leaves the fold's `limit` (the
 * reducer reads the StopFailure). With on_limit wait (the session's `on_limit`, else CLAUDE_SESSIONS_ON_LIMIT; wait is
 * the default) the server then:
 *
 *  1. writes a wake file `<stateDir>/limit-wakes/pending/<id>.<seq>.json` (due at resets_at plus a random jitter up to
 *     CLAUDE_SESSIONS_LIMIT_JITTER_MS) and hibernates the session (no process, no memory held);
 *  2. at the due time claims the wake with link(2) into `claimed/` (one claim per limit, whichever server or restart
 *     gets there first: a server killed -9 and started again, or two servers on one state dir, wake it ONCE), and
 *     takes a slot `slots/<n>` the same way: slot n is the n-th interval of 60 s / CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN,
 *     so the fleet's wakes are spaced evenly, at most that many a minute across every server;
 *  3. reads the transcript: when the interrupted prompt has an answer after all, nothing is sent (cs:limit_over);
 *     otherwise the prompt is sent again (its send wakes the session). A session that hits the limit again is
 *     parked again under its new limit (a new seq, a new claim).
 *
 * A claim taken by a server that died before its send leaves that limit unwoken (at most once, never twice): the
 * session stays shown `limited` past resets_at, and the next prompt anyone sends wakes it.
 */
import { link, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { randomInt } from "node:crypto";
import { promptAnswered } from "../../claude/answered.js";
import { limitOf } from "../../core/limit.js";
import { transcriptPath } from "../../claude/transcript.js";
import { accountLimits, accountRooms, configDirFor, noteAccountLimit, readAccounts } from "../../claude/accounts.js";
import type { FoldedLimit } from "../../events/reducer.js";
import { serverAction } from "../audit.js";
import type { Deps } from "../deps.js";
import { hibernate } from "../life/sleep.js";
import type { Session } from "../session.js";
import { readTail } from "../../util/fs/files.js";
import { waitForChange } from "../../util/fs/file-change.js";
import type { SessionRecord } from "../../store/schema.js";

interface WakeFile {
  session_id: string;
  /** The limit's event seq: one wake per limit. */
  seq: number;
  resets_at: string;
  due_at: string;
  prompt?: string;
  prompt_id?: string;
  claude_session_id?: string;
  /** on_limit switch_account: continue on this account (due at once) instead of waiting for the reset. */
  switch_to?: string;
}

/** Sends a prompt to a session (the service's send: it wakes a hibernated one). */
export type Resend = (id: string, message: string) => Promise<unknown>;

/** Resumes a session under another account, with its interrupted prompt (the service's resume). */
export type SwitchAccount = (id: string, account: string, message: string | undefined) => Promise<unknown>;

/** A wake due more than this far ahead is looked at again then (timers are capped by Node at ~24.8 days). */
const MAX_TIMER_MS = 3600_000;

export class LimitPark {
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly handled = new Map<string, number>();
  readonly dir: string;

  constructor(
    private readonly d: Deps,
    private readonly resend: Resend,
    private readonly switchAccount?: SwitchAccount,
  ) {
    this.dir = join(d.cfg.stateDir, "limit-wakes");
    // Wakes left by an earlier server (or another one on this state dir) are due too.
    void this.schedule();
  }

  private path(kind: "pending" | "claimed", name: string): string {
    return join(this.dir, kind, name);
  }

  /** Called for every batch of a followed session's events. */
  changed(x: Session): void {
    const f = x.live.fold;
    const l = f.limit;
    if (this.closed || !l || f.status !== "idle") return;
    if (this.handled.get(x.id) === l.seq) return;
    this.handled.set(x.id, l.seq);
    void this.park(x.id, l, f.claude_session_id).catch((e: unknown) =>
      this.d.log.warn(`${x.id}: parking at its usage limit: ${String(e)}`),
    );
  }

  private async park(id: string, l: FoldedLimit, claudeSessionId: string | undefined): Promise<void> {
    const d = this.d;
    const name = `${id}.${l.seq}.json`;
    // Read from the CLI's message against the event's time, or now (hook lines carry none; this runs as it lands).
    // A limit the CLI gave no reset time for (an API key's 429) is waited out for the operator's time.
    const since = l.since ? Date.parse(l.since) : Date.now();
    const info = limitOf(l.message, Number.isFinite(since) ? since : Date.now(), d.cfg.limitRateWaitMs);
    if (info.warning) d.log.warn(`${id}: ${info.warning}`);
    const resetsAt = info.resets_at;
    const rec = await d.store.get(id);
    // The session's own choice (start_session/resume_session on_limit), else the operator's.
    const onLimit = rec?.on_limit ?? d.cfg.onLimit;
    if (onLimit === "fail") {
      // on_limit fail: shown limited until the reset, nothing parked, nothing resent.
      await d.registry.emit(id, { hook_event_name: "cs:limit_wait", limit_seq: l.seq, resets_at: resetsAt });
      return;
    }
    if (rec?.account) noteAccountLimit(d.cfg.stateDir, rec.account, resetsAt);
    const switchTo = onLimit === "switch_account" ? await this.otherAccount(id) : undefined;
    const due = switchTo
      ? Date.now()
      : Date.parse(resetsAt) + (d.cfg.limitJitterMs > 0 ? randomInt(0, d.cfg.limitJitterMs + 1) : 0);
    const w: WakeFile = {
      session_id: id,
      seq: l.seq,
      resets_at: resetsAt,
      due_at: new Date(due).toISOString(),
      ...(switchTo ? { switch_to: switchTo } : {}),
      ...(l.prompt !== undefined ? { prompt: l.prompt } : {}),
      ...(l.prompt_id ? { prompt_id: l.prompt_id } : {}),
      ...(claudeSessionId ? { claude_session_id: claudeSessionId } : {}),
    };
    await mkdir(join(this.dir, "pending"), { recursive: true, mode: 0o700 });
    await mkdir(join(this.dir, "claimed"), { recursive: true, mode: 0o700 });
    await mkdir(join(this.dir, "slots"), { recursive: true, mode: 0o700 });
    // Written once: another server that saw the same limit finds it there (wx) and keeps the first due time.
    const first = await writeFile(this.path("pending", name), JSON.stringify(w), { flag: "wx", mode: 0o600 }).then(
      () => true,
      (e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw e;
        return false;
      },
    );
    if (first)
      await d.registry.emit(id, { hook_event_name: "cs:limit_wait", limit_seq: l.seq, resets_at: w.resets_at, due_at: w.due_at });
    d.log.info(
      `${id}: limited (${l.kind}) until ${w.resets_at}; parked, ${w.switch_to ? `continuing on account ${w.switch_to}` : `wake due ${w.due_at}`}`,
    );
    // The wake resumes the conversation from its transcript: a CLI ended before it wrote the limited prompt there
    // (a limit on the first prompt, answered within ~0.2 s) leaves nothing to resume ("No conversation found").
    if (rec && !(await promptWritten(this.transcriptOf(rec, claudeSessionId), l.prompt_id)))
      d.log.warn(`${id}: its transcript does not show the limited prompt yet`);
    // One hibernation at a time: a fleet limited at once (20 sessions in the bench) ended 20 process trees together,
    // and that burst held up the state lock and every other session's reply for 10-20 s (docs/performance.md). The
    // wake is minutes away; nothing is lost by parking them in turn.
    await this.inTurn(() =>
      serverAction(d, "usage_limit", "kill_session", id, () => hibernate(d, id, `usage limit (${l.kind}) until ${w.resets_at}`)),
    );
    void this.schedule();
  }

  private hibernations: Promise<unknown> = Promise.resolve();

  /** Runs `fn` after the hibernations already in line. */
  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.hibernations.then(fn, fn);
    this.hibernations = p.catch(() => undefined);
    return p;
  }

  /**
   * on_limit switch_account: another account of the operator's with room (not limited, fewest sessions) for a session
   * that runs under an account; undefined when there is none (the session waits for its reset).
   */
  private async otherAccount(id: string): Promise<string | undefined> {
    const d = this.d;
    if (!d.cfg.accountsFile || !this.switchAccount) return undefined;
    const r = await d.store.get(id);
    if (!r?.account) return undefined;
    try {
      const users = Object.values((await d.store.read()).sessions);
      const rooms = accountRooms(readAccounts(d.cfg.accountsFile), users, Date.now(), accountLimits(d.cfg.stateDir)).filter(
        (a) => a.name !== r.account && !a.limited_until,
      );
      return rooms.sort((a, b) => a.sessions.length - b.sessions.length)[0]?.name;
    } catch (e) {
      d.log.warn(`${id}: switch_account: ${e instanceof Error ? e.message : String(e)}; waiting for the reset instead`);
      return undefined;
    }
  }

  /** Arms the timer for the earliest pending wake (or runs the due ones). */
  private async schedule(): Promise<void> {
    if (this.closed) return;
    const pending = await this.pending();
    if (!pending.length) return;
    const next = Math.min(...pending.map((p) => Date.parse(p.w.due_at)));
    const wait = Math.max(0, Math.min(MAX_TIMER_MS, next - Date.now()));
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), wait);
    this.timer.unref();
  }

  private async pending(): Promise<Array<{ name: string; w: WakeFile }>> {
    let names: string[];
    try {
      names = (await readdir(join(this.dir, "pending"))).filter((n) => n.endsWith(".json"));
    } catch {
      return [];
    }
    const out: Array<{ name: string; w: WakeFile }> = [];
    for (const name of names) {
      try {
        const w = JSON.parse(await readFile(this.path("pending", name), "utf8")) as WakeFile;
        if (typeof w.session_id === "string" && typeof w.due_at === "string" && Number.isFinite(Date.parse(w.due_at)))
          out.push({ name, w });
      } catch {
        /* being written, or gone */
      }
    }
    return out;
  }

  /** Wakes the due sessions in due order, one per slot. */
  private async run(): Promise<void> {
    if (this.closed || this.running) return;
    this.running = true;
    try {
      const due = (await this.pending())
        .filter((p) => Date.parse(p.w.due_at) <= Date.now())
        .sort((a, b) => Date.parse(a.w.due_at) - Date.parse(b.w.due_at));
      for (const p of due) {
        if (this.closed) return;
        await this.slot();
        if (this.closed) return;
        if (!(await this.claim(p.name))) continue;
        // Not awaited: the slots pace the wakes; a slow start does not hold back the next one.
        void this.wake(p.w).catch((e: unknown) =>
          this.d.log.warn(`${p.w.session_id}: waking after its usage limit: ${String(e)}`),
        );
      }
    } finally {
      this.running = false;
      void this.schedule();
    }
  }

  /** Waits for a free slot and takes it (link(2): one owner per slot across every server on the state dir). */
  private async slot(): Promise<void> {
    const every = Math.ceil(60_000 / this.d.cfg.limitWakesPerMin);
    const token = join(this.dir, "slots", `.token-${process.pid}`);
    await writeFile(token, "");
    for (;;) {
      if (this.closed) return;
      const n = Math.floor(Date.now() / every);
      try {
        await link(token, join(this.dir, "slots", String(n)));
        await this.pruneSlots(n);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      await new Promise((r) => setTimeout(r, (n + 1) * every - Date.now() + 5).unref());
    }
  }

  private async pruneSlots(n: number): Promise<void> {
    const names = await readdir(join(this.dir, "slots")).catch(() => [] as string[]);
    await Promise.all(
      names.filter((s) => /^\d+$/.test(s) && Number(s) < n - 100).map((s) => rm(join(this.dir, "slots", s), { force: true })),
    );
  }

  /** True when this server now owns the wake (the first link of its pending file into claimed/). */
  private async claim(name: string): Promise<boolean> {
    try {
      await link(this.path("pending", name), this.path("claimed", name));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" && code !== "ENOENT") throw e;
      await rm(this.path("pending", name), { force: true });
      return false;
    }
    await rm(this.path("pending", name), { force: true });
    return true;
  }

  private async wake(w: WakeFile): Promise<void> {
    const d = this.d;
    const r = await d.store.get(w.session_id);
    if (!r) return;
    const s = await d.registry.follow(w.session_id);
    // Already moved on (a prompt was sent meanwhile, or a newer limit), or ended (kill_session): this wake is over.
    if (!s.fold.limit || s.fold.limit.seq !== w.seq) return;
    if (s.fold.status !== "hibernated" && s.fold.status !== "idle") {
      d.log.info(`${w.session_id}: the limit has lifted, but the session is ${s.fold.status}: nothing sent`);
      return;
    }
    const path = this.transcriptOf(r, w.claude_session_id ?? s.fold.claude_session_id);
    if (w.prompt === undefined || (await promptAnswered(path, w.prompt_id, w.prompt))) {
      d.log.info(
        `${w.session_id}: the limit has lifted; ${w.prompt === undefined ? "no prompt to resend" : "its prompt was answered already"}: nothing sent`,
      );
      await d.registry.emit(w.session_id, { hook_event_name: "cs:limit_over" });
      return;
    }
    if (w.switch_to && this.switchAccount) {
      d.log.info(`${w.session_id}: continuing on account ${w.switch_to} with the interrupted prompt`);
      await this.switchAccount(w.session_id, w.switch_to, w.prompt);
      return;
    }
    d.log.info(`${w.session_id}: the limit has lifted; sending the interrupted prompt again`);
    await this.resend(w.session_id, w.prompt);
  }

  /** The session's transcript: its account's config folder, its cwd, the conversation id given (else the record's). */
  private transcriptOf(r: SessionRecord, claudeSessionId: string | undefined): string {
    return transcriptPath(
      configDirFor(this.d.cfg.accountsFile, this.d.cfg.claudeConfigDir, r.account),
      r.cwd,
      claudeSessionId ?? r.claude_session_id,
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}

/** How long a limited session's CLI is given to write the limited prompt into its transcript before it is ended. */
const PROMPT_WRITTEN_MS = 3000;

/** Whether the transcript holds the prompt (its `promptId`; without one, any transcript), waiting PROMPT_WRITTEN_MS at most. */
async function promptWritten(path: string, promptId: string | undefined): Promise<boolean> {
  const until = Date.now() + PROMPT_WRITTEN_MS;
  for (;;) {
    const { text, end } = await readTail(path, 1 << 20).catch(() => ({ text: "", end: 0 }));
    if (promptId ? text.includes(`"promptId":"${promptId}"`) : end > 0) return true;
    const left = until - Date.now();
    if (left <= 0) return false;
    // Woken by the CLI's write (its folder watched); looked at again after a while when the folder is not there yet.
    await waitForChange(dirname(path), Math.min(250, left));
  }
}
