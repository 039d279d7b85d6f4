/** The headless runner: the CLI through the Agent SDK, no terminal; it lives as long as this server. */
import { HEADLESS_ONLY } from "../../api/index.js";
import type { Driver } from "../driver.js";
import type { Capabilities, Runner } from "../runner.js";
import type { HeadlessHost } from "./host.js";

export const HEADLESS_CAPS: Capabilities = {
  screen: false,
  survivesRestart: false,
  warmPool: true,
  permissionHook: false,
  trustScreen: false,
  ownTurnLimit: true,
  honours: HEADLESS_ONLY,
  // mcp_servers never: their env and headers may hold secrets.
  keeps: ["max_turns", "max_budget_usd", "system_prompt", "fallback_model", "strict_mcp_config", "setting_sources", "output_schema"],
};

export function headlessRunner(host: HeadlessHost, driver: Driver): Runner {
  return { kind: host.kind, caps: HEADLESS_CAPS, backend: host, driver };
}
