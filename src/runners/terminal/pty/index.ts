/**
 * The pty runner kind: sessions in a pseudo-terminal of this process (they end with it), held by the terminal driver.
 * node-pty is an optional native addon, loaded on the first pty session: when it is missing or was built for another
 * Node, only pty goes, with the reason in the error.
 */
import type { Runner, RunnerSetup } from "../../runner.js";
import { TerminalDriver } from "../driver.js";
import { terminalRunner } from "../runner.js";
import { LazyHost } from "./lazy.js";

/** node-pty (pty sessions) loads in this Node. */
async function nodePty(): Promise<{ ok: boolean; detail: string }> {
  try {
    await import("node-pty");
    return { ok: true, detail: "node-pty loads (pty sessions)" };
  } catch (e) {
    return { ok: false, detail: `node-pty does not load: ${String(e).slice(0, 200)} (pty sessions are unavailable)` };
  }
}

export function ptyRunner({ cfg, log, scripts }: RunnerSetup): Runner {
  const host = new LazyHost("pty", false, async () => {
    const { PtyHost } = await import("./pty.js");
    return new PtyHost({ hookScript: scripts.hook, log, outputMaxBytes: cfg.outputLogMaxBytes });
  });
  return terminalRunner(host, new TerminalDriver(host, log, cfg.stateDir), {
    // Known on the first session (the addon is loaded then): its error says why.
    available: async () => undefined,
    health: async () => ({ check: "pty", ...(await nodePty()) }),
  });
}
