/** A terminal runner (tmux, pty): Claude Code's interactive screen in a terminal host, held by the terminal driver. */
import type { Driver } from "../driver.js";
import type { TerminalHost } from "../host.js";
import type { Capabilities, Runner } from "../runner.js";

export function terminalCaps(host: TerminalHost): Capabilities {
  return {
    screen: true,
    survivesRestart: host.survivesRestart,
    warmPool: false,
    permissionHook: true,
    trustScreen: true,
    ownTurnLimit: false,
    honours: ["doppler"],
    keeps: [],
  };
}

export function terminalRunner(host: TerminalHost, driver: Driver): Runner {
  return { kind: host.kind, caps: terminalCaps(host), backend: host, terminal: host, driver };
}
