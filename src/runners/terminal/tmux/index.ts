/** The tmux runner kind: sessions in a tmux server (they outlive this process), held by the terminal driver. */
import { SessionError } from "../../../core/errors.js";
import type { Runner, RunnerSetup } from "../../runner.js";
import { TerminalDriver } from "../driver.js";
import { terminalRunner } from "../runner.js";
import { TmuxHost } from "./tmux.js";

export function tmuxRunner({ cfg, log, scripts }: RunnerSetup): Runner {
  const tmuxPath = cfg.tmuxPath ?? "tmux";
  const host = new TmuxHost({
    tmuxPath,
    hookScript: scripts.hook,
    launchScript: scripts.launch,
    captureScript: scripts.capture,
    outputMaxBytes: cfg.outputLogMaxBytes,
    ...(cfg.tmuxSocketName ? { socketName: cfg.tmuxSocketName } : {}),
    ...(cfg.tmuxSocketPath ? { socketPath: cfg.tmuxSocketPath } : {}),
  });
  // tmux -V: a process (~10 ms quiet, far more under load).
  const version = () => host.version().catch(() => undefined);
  return terminalRunner(host, new TerminalDriver(host, log, cfg.stateDir), {
    available: async () =>
      (await version())
        ? undefined
        : new SessionError("TMUX_NOT_FOUND", `tmux was not found (${tmuxPath}); tmux sessions are unavailable on this server.`),
    health: async () => {
      const v = await version();
      return { check: "tmux", ok: v !== undefined, detail: v ?? `${tmuxPath} not found: tmux sessions are unavailable` };
    },
  });
}
