/**
 * The runner kinds of this server, one line each, in the order health_check lists them. A new way to run a session
 * is a folder under runners/ whose maker builds its Runner (host, driver, capabilities, health, availability,
 * close) and one line here; app.ts builds them in a loop and the session layer only ever sees the Runner interface.
 */
import type { BackendKind } from "../core/events.js";
import { makeHeadlessRunner } from "./headless/runner.js";
import type { Runner, RunnerSetup } from "./runner.js";
import { ptyRunner } from "./terminal/pty/index.js";
import { tmuxRunner } from "./terminal/tmux/index.js";

export const RUNNER_KINDS: ReadonlyArray<{ kind: BackendKind; make: (s: RunnerSetup) => Runner }> = [
  { kind: "tmux", make: tmuxRunner },
  { kind: "pty", make: ptyRunner },
  { kind: "headless", make: makeHeadlessRunner },
];

/** One runner of every kind (nothing is started: a maker only builds objects; `available()` asks the machine). */
export function makeRunners(s: RunnerSetup): Runner[] {
  return RUNNER_KINDS.map((k) => k.make(s));
}
