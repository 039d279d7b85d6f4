/**
 * One long-lived tmux client in control mode (`tmux -C`) for the calls a turn makes again and again: the paste, the
 * keys, the screen reads. Each of them as a tmux process of its own costs a fork of this server and a client's start
 * (8–12 ms of wall on a loaded machine, the server's event loop blocked ~4 ms of it); a follow-up pays several on its
 * way to the CLI (issue 38). Through this client a call is a line written and a block read back (well under 1 ms).
 *
 * What may reach it: command lines made here of server-made words only (CONTROL_WORD: the session's name, key names,
 * numbers, buffer names, the path of this server's own file, a random word). Caller text never does: a paste goes in
 * through a file (`load-buffer`, which tmux has read before the next command runs). A screen comes back in the
 * channel, where a pane could print lines that look like the protocol's own (`%end …`): each read is framed by a
 * random word printed after it (screen()), which no pane can know. Every command is a line of its own: tmux answers
 * each command with a block, and a refused command in a `;` list would cancel the rest of it.
 *
 * The client attaches (`-f ignore-size,no-output`: no size change, no output stream) to the session the first call
 * is for; when that session ends the client ends with it and a later call starts another. Whenever it cannot be used
 * (no tmux server yet, a word that is not safe, the client ended before answering) a call resolves `undefined` and
 * the caller runs tmux as a process, as before.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SessionError } from "../../../core/errors.js";
import type { Logger } from "../../../util/log.js";

/** A word tmux's command parser takes as it is: no quote, space, `;`, `#`, `$`, `~`, brace or backslash. */
export const CONTROL_WORD = /^[A-Za-z0-9_@%=:.,/+-]+$/;

/** How long a call waits for its block before the client is given up (the call then resolves undefined). */
const ANSWER_MS = 5_000;
/** A client that ends this soon after its start, having answered nothing, is not started again for as long. */
const RETRY_MS = 1_000;

/** A command's answer: ok or refused, and what it printed (tmux's reason when refused). */
interface Answer {
  ok: boolean;
  text: string;
}

interface Waiting {
  resolve(r: Answer | undefined): void;
  timer: NodeJS.Timeout;
  /** A framed read (screen): its output ends where this word is printed, and only there. */
  nonce?: string;
}

export class TmuxControl {
  private child: ChildProcess | undefined;
  private waiting: Waiting[] = [];
  private partial = "";
  /** The block being read: its command number and the lines so far. */
  private block: { num: string; lines: string[] } | undefined;
  /** A framed read under way: every line up to its nonce. */
  private framed: { nonce: string; lines: string[] } | undefined;
  /** The end line of a framed read's closing command, not an answer of its own. */
  private skipEnd: string | undefined;
  private closed = false;
  /** A client that ended within RETRY_MS of its start, answering nothing (no tmux server, a session gone): not before this. */
  private retryAt = 0;
  private startedAt = 0;
  private answered = false;

  private seq = 0;
  private dirMade: Promise<unknown> | undefined;

  /** `ioDir`: where the paste files go (this server's own, 0700; its path must be CONTROL_WORD-safe). */
  constructor(
    private readonly bin: string,
    private readonly base: readonly string[],
    private readonly env: NodeJS.ProcessEnv,
    private readonly ioDir: string,
    private readonly log?: Logger,
  ) {}

  /** A file of this server's for one call, and the buffer name that goes with it. */
  private async file(): Promise<{ path: string; buf: string } | undefined> {
    const n = ++this.seq;
    const path = join(this.ioDir, `${process.pid}-${n}`);
    if (!CONTROL_WORD.test(path)) return undefined;
    this.dirMade ??= mkdir(this.ioDir, { recursive: true, mode: 0o700 });
    await this.dirMade;
    return { path, buf: `cs-io-${process.pid}-${n}` };
  }

  /** Pastes `text` bracketed into the session's pane. true: done; undefined: not through this client. */
  async paste(session: string, text: string): Promise<true | undefined> {
    const f = await this.file();
    if (!f) return undefined;
    try {
      await writeFile(f.path, text, { mode: 0o600 });
      const r = await this.run(session, [
        ["load-buffer", "-b", f.buf, f.path],
        ["paste-buffer", "-p", "-d", "-b", f.buf, "-t", `=${session}:`],
      ]);
      if (r && !r.ok) {
        // paste-buffer -d deletes the buffer only once it pasted.
        await this.run(session, [["delete-buffer", "-b", f.buf]]);
        throw new SessionError("PROCESS_ERROR", `tmux paste-buffer failed: ${r.text.trim() || "refused"}`);
      }
      return r ? true : undefined;
    } finally {
      await rm(f.path, { force: true });
    }
  }

  /** Sends key names to the session's pane. true: done; undefined: not through this client. */
  async keys(session: string, keys: readonly string[]): Promise<true | undefined> {
    const r = await this.run(session, [["send-keys", "-t", `=${session}:`, ...keys]]);
    if (r && !r.ok) throw new SessionError("PROCESS_ERROR", `tmux send-keys failed: ${r.text.trim() || "refused"}`);
    return r ? true : undefined;
  }

  /**
   * The pane's screen (with `above` lines of scrollback) as a `capture-pane -p` process prints it; null when tmux
   * refused (the session is gone); undefined when not through this client. The capture is followed by a command that
   * prints a random word: the screen is what lies between the capture's begin line and the end line just before that
   * word, so nothing a pane shows can end it early or late.
   */
  async screen(session: string, above: number): Promise<string | null | undefined> {
    const nonce = randomBytes(12).toString("hex");
    const capture = ["capture-pane", "-p", ...(above ? ["-S", String(-above)] : []), "-t", `=${session}:`];
    const r = await this.send(session, [capture, ["display-message", "-p", nonce]], nonce);
    return r === undefined ? undefined : r.ok ? r.text : null;
  }

  /**
   * Runs commands, each an array of words, one line each: tmux answers every command with a block of its own, and a
   * command that fails does not cancel the next line (as it would the rest of a `;` list). `session`: a live session's
   * name, attached to when no client runs. Resolves `{ ok }` (false, with tmux's error text, when any was refused), or
   * undefined when the client cannot be used for them.
   */
  async run(session: string, commands: readonly (readonly string[])[]): Promise<Answer | undefined> {
    const answers = await Promise.all(commands.map((c) => this.send(session, [c])));
    if (answers.some((a) => a === undefined)) return undefined;
    const refused = answers.filter((a) => !a!.ok);
    return { ok: refused.length === 0, text: refused.map((a) => a!.text).join("\n") };
  }

  /** Writes the lines of one answer (one line, or a framed read's two) and waits for it. */
  private async send(session: string, lines: readonly (readonly string[])[], nonce?: string): Promise<Answer | undefined> {
    if (this.closed || !CONTROL_WORD.test(session) || !lines.flat().every((w) => CONTROL_WORD.test(w))) return undefined;
    if (!this.child && Date.now() < this.retryAt) return undefined;
    const child = this.child ?? this.start(session);
    if (!child?.stdin?.writable) return undefined;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.log?.warn(`tmux control client: no answer within ${ANSWER_MS} ms; going back to a tmux process per call`);
        this.stop();
      }, ANSWER_MS);
      this.waiting.push({ resolve, timer, ...(nonce ? { nonce } : {}) });
      child.stdin!.write(lines.map((c) => `${c.join(" ")}\n`).join(""));
    });
  }

  private start(session: string): ChildProcess | undefined {
    const child = spawn(this.bin, [...this.base, "-C", "attach-session", "-f", "ignore-size,no-output", "-t", `=${session}`], {
      stdio: ["pipe", "pipe", "ignore"],
      env: this.env,
    });
    this.child = child;
    this.startedAt = Date.now();
    this.answered = false;
    this.partial = "";
    this.block = undefined;
    this.framed = undefined;
    this.skipEnd = undefined;
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (s: string) => this.read(s));
    child.stdin!.on("error", () => {});
    child.on("error", () => this.gone(child));
    child.on("close", () => this.gone(child));
    child.unref();
    (child.stdout as { unref?: () => void }).unref?.();
    (child.stdin as { unref?: () => void }).unref?.();
    return child;
  }

  /** Lines outside a block are notifications (%session-changed, %exit, …): not answers. */
  private read(s: string): void {
    const text = this.partial + s;
    const lines = text.split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (this.framed) {
        if (line === this.framed.nonce) this.endFramed();
        else this.framed.lines.push(line);
        continue;
      }
      const m = /^%(begin|end|error) \d+ (\d+) (\d+)$/.exec(line);
      if (m && m[1] !== "begin" && !this.block && m[2] === this.skipEnd) {
        this.skipEnd = undefined;
      } else if (m && m[1] === "begin" && !this.block) {
        // Flags 1: a command of this client's (the attach's own block has 0).
        if ((Number(m[3]) & 1) !== 1) continue;
        const nonce = this.waiting[0]?.nonce;
        if (nonce) this.framed = { nonce, lines: [] };
        else this.block = { num: m[2]!, lines: [] };
      } else if (m && this.block && m[2] === this.block.num) {
        const w = this.waiting.shift();
        const text = this.block.lines.join("\n");
        this.answered = true;
        this.block = undefined;
        if (w) {
          clearTimeout(w.timer);
          w.resolve({ ok: m[1] === "end", text });
        }
      } else if (this.block) this.block.lines.push(line);
    }
  }

  /**
   * A framed read's nonce arrived: before it, its own command's begin line, and before that the end line of the
   * read's command. What a pane printed sits between the read's begin line and that end line, whatever it looks like.
   */
  private endFramed(): void {
    const lines = this.framed!.lines;
    this.framed = undefined;
    const begin = /^%begin \d+ (\d+) 1$/.exec(lines.pop() ?? "");
    const end = /^%(end|error) \d+ \d+ 1$/.exec(lines.pop() ?? "");
    const w = this.waiting.shift();
    if (w) clearTimeout(w.timer);
    if (!begin || !end) {
      this.log?.warn("tmux control client: a read did not end as framed; going back to a tmux process per call");
      w?.resolve(undefined);
      this.stop();
      return;
    }
    this.skipEnd = begin[1];
    this.answered = true;
    w?.resolve({ ok: end[1] === "end", text: lines.map((l) => `${l}\n`).join("") });
  }

  /** The client ended (its session ended, tmux went away): calls not answered go back to a tmux process each. */
  private gone(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (!this.answered && Date.now() - this.startedAt < RETRY_MS) this.retryAt = Date.now() + RETRY_MS;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.resolve(undefined);
    }
  }

  private stop(): void {
    const child = this.child;
    if (!child) return;
    this.gone(child);
    child.kill("SIGKILL");
  }

  close(): void {
    this.closed = true;
    this.stop();
  }
}
