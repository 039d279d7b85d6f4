/**
 * An in-memory TerminalHost for the fast tier: a scripted Claude that draws an input box, takes pastes and keys, and
 * writes hook events straight into the session's events log, so the whole session layer (registry, reducer,
 * waiters, store, terminal driver) runs in milliseconds without tmux or a real process.
 */
import { appendFileSync } from "node:fs";
import {
  ownedInProcess,
  type HostRef,
  type TerminalHost,
  type Key,
  type Liveness,
  type TerminalPlan,
  type Spawned,
} from "../../src/runners/host.js";
import type { BackendKind } from "../../src/core/events.js";

/**
 * A screen a scripted turn shows instead of replying (a prompt that blocks the turn, no hook fires), and what a key
 * does to it: nothing (undefined), "end" (the screen goes and the turn ends with Stop), "interrupted" (the screen goes,
 * "Interrupted" shows, no hook: Esc), "permission" (a PermissionRequest hook), "slow-redraw" (the answer is taken:
 * PostToolUse at once, but the screen is drawn away only after `redrawMs`, then Stop, as a loaded CLI does), or the
 * next screen.
 */
export interface ScriptedScreen {
  text: string;
  onKey?: (k: Key) => "end" | "interrupted" | "permission" | "slow-redraw" | ScriptedScreen | undefined;
  /** "slow-redraw": how long the answered screen stays drawn. */
  redrawMs?: number;
}

export interface FakeSession {
  spec: TerminalPlan;
  pid: number;
  alive: boolean;
  input: string;
  pastes: string[];
  keys: Key[];
  prompts: string[];
  /** The scripted screen shown now (instead of the input box). */
  shown?: ScriptedScreen | undefined;
  interrupted?: boolean;
}

const RULE = "─".repeat(60);

export class FakeBackend implements TerminalHost {
  readonly sessions = new Map<string, FakeSession>();
  /** Enter presses to ignore (as if the paste had not been drawn yet), per session. */
  dropEnters = 0;
  /**
   * Enter presses that come before the last paste is taken (2.1.197 under load): the prompt is submitted without it
   * and the paste lands in the box afterwards.
   */
  lateLastPaste = 0;
  /** The reply to a prompt. */
  reply: (prompt: string) => string = (p) => `FAKE REPLY: ${p}`;
  /** A screen a prompt's turn shows instead of its reply (undefined: it replies). */
  screenFor: (prompt: string) => ScriptedScreen | undefined = () => undefined;
  private nextPid = 900_000;

  constructor(
    readonly kind: BackendKind = "tmux",
    readonly survivesRestart = true,
  ) {}

  private event(s: FakeSession, ev: Record<string, unknown>): void {
    appendFileSync(s.spec.eventsPath, JSON.stringify(ev) + "\n");
  }

  owns(ref: HostRef | undefined): boolean {
    return this.survivesRestart || ownedInProcess(ref);
  }

  async spawn(spec: TerminalPlan): Promise<Spawned> {
    const s: FakeSession = { spec, pid: this.nextPid++, alive: true, input: "", pastes: [], keys: [], prompts: [] };
    this.sessions.set(spec.id, s);
    setTimeout(() => this.event(s, { hook_event_name: "SessionStart", source: "startup" }), 5);
    return { pid: s.pid, ref: this.survivesRestart ? { target: `cs-${spec.id}` } : { owner_pid: process.pid } };
  }

  private get(id: string): FakeSession {
    const s = this.sessions.get(id);
    if (!s?.alive) throw new Error(`fake session ${id} is not running`);
    return s;
  }

  async paste(id: string, text: string): Promise<void> {
    const s = this.get(id);
    s.pastes.push(text);
    s.input += text;
  }

  async keys(id: string, keys: readonly Key[]): Promise<void> {
    const s = this.get(id);
    for (const k of keys) {
      s.keys.push(k);
      if (s.shown) {
        this.onScreenKey(s, k);
        continue;
      }
      if (k !== "Enter") continue;
      if (this.dropEnters > 0) {
        this.dropEnters--;
        continue;
      }
      let prompt = s.input;
      s.input = "";
      if (this.lateLastPaste > 0 && s.pastes.length) {
        this.lateLastPaste--;
        const late = s.pastes.at(-1)!;
        prompt = prompt.slice(0, prompt.length - late.length);
        s.input = late;
      }
      if (!prompt) continue;
      s.prompts.push(prompt);
      s.interrupted = false;
      this.event(s, { hook_event_name: "UserPromptSubmit", prompt });
      const shown = this.screenFor(prompt);
      if (shown) {
        s.shown = shown;
        continue;
      }
      setTimeout(() => this.event(s, { hook_event_name: "Stop", last_assistant_message: this.reply(prompt) }), 2);
    }
  }

  private onScreenKey(s: FakeSession, k: Key): void {
    const next = s.shown?.onKey?.(k);
    if (next === undefined) return;
    if (typeof next === "object") {
      s.shown = next;
      return;
    }
    if (next === "slow-redraw") {
      const shown = s.shown;
      this.event(s, { hook_event_name: "PostToolUse", tool_name: "ExitPlanMode", tool_input: {} });
      setTimeout(() => {
        if (s.shown !== shown) return;
        s.shown = undefined;
        this.event(s, { hook_event_name: "Stop", last_assistant_message: this.reply(s.prompts.at(-1) ?? "") });
      }, shown?.redrawMs ?? 2500);
      return;
    }
    s.shown = undefined;
    const prompt = s.prompts.at(-1) ?? "";
    if (next === "end")
      setTimeout(() => this.event(s, { hook_event_name: "Stop", last_assistant_message: this.reply(prompt) }), 2);
    if (next === "interrupted") s.interrupted = true;
    if (next === "permission")
      this.event(s, {
        hook_event_name: "PermissionRequest",
        tool_name: "Bash",
        tool_input: { command: "touch /tmp/outside.txt" },
      });
  }

  async screen(id: string): Promise<string> {
    const s = this.get(id);
    if (s.shown) return s.shown.text;
    if (s.interrupted)
      return ["  ⎿  Interrupted · What should Claude do instead?", "", RULE, `❯ ${s.input}`, RULE, "  ? for shortcuts"].join(
        "\n",
      );
    return ["", RULE, `❯ ${s.input}`, RULE, "  ? for shortcuts"].join("\n");
  }

  async list(): Promise<Map<string, Liveness>> {
    const m = new Map<string, Liveness>();
    for (const [id, s] of this.sessions) m.set(id, { exists: true, alive: s.alive, pid: s.pid });
    return m;
  }

  /** kill: SessionEnd at once, the terminal gone only this much later (a CLI taking SIGTERM on a loaded machine). */
  slowKillMs = 0;

  async kill(id: string): Promise<{ exitCode?: number; forced: boolean }> {
    const s = this.sessions.get(id);
    if (s?.alive && this.slowKillMs > 0) {
      this.event(s, { hook_event_name: "SessionEnd", reason: "other" });
      await new Promise((r) => setTimeout(r, this.slowKillMs));
    }
    if (s?.alive) {
      s.alive = false;
      this.event(s, { hook_event_name: "cs:exit", exit_code: 143 });
    }
    return { exitCode: 143, forced: false };
  }

  async remove(id: string): Promise<void> {
    this.sessions.delete(id);
  }

  attachCommand(id: string): string {
    return `fake attach ${id}`;
  }
}
