/**
 * `claude-sessions` (or `serve`) on stdio, started at once (issue 38 item 3): what a client pays to spawn the server,
 * initialize and list its tools is node's start and the MCP SDK, not the server's. With the default toolsets and the
 * listing made at build time (server/listing/cache.ts), a server shell (server/mcp/shell.ts) is connected first and
 * answers initialize and tools/list; the rest of the server — its modules, the state directory, adopting the live
 * sessions (cli/main.ts serve) — is made once tools/list has been answered (or a call waits, or 250 ms passed), and
 * the calls that came meanwhile are held until it is (server/mcp/hold.ts). Otherwise (other toolsets, no listing
 * file, a configuration error) the server starts as the other commands do, all before it connects.
 * Imports only what the shell needs: everything else is loaded after.
 */
import { loadConfig } from "../config.js";
import { builtListing } from "../server/listing/cache.js";
import { INSTRUCTIONS } from "../server/instructions.js";
import { holdCalls } from "../server/mcp/hold.js";
import { serverShell, type ShellOptions } from "../server/mcp/shell.js";
import { BoundedStdioServerTransport } from "../server/mcp/stdio.js";
import { packageVersion } from "../util/version.js";

/** The default toolsets' listing, or undefined when this start cannot answer before the server is made. */
function builtDefaultListing(): ShellOptions["tools"] | undefined {
  try {
    const sets = loadConfig().toolsets ?? ["all"];
    return sets.length === 1 && sets[0] === "all" ? builtListing<ShellOptions["tools"][number]>("all") : undefined;
  } catch {
    return undefined; // the configuration's error is reported by the full start
  }
}

export async function serveStdio(): Promise<void> {
  const tools = builtDefaultListing();
  if (!tools) return (await import("./main.js")).runCli();
  // Every tool offered: the instructions name them all (instructionsFor leaves out none).
  const server = serverShell(packageVersion(), { core: true, instructions: INSTRUCTIONS, tools, rowsPush: true });
  const transport = new BoundedStdioServerTransport();
  await server.connect(transport);
  const held = holdCalls(transport);
  // The input ending before the server is made: it is made (a configuration error is still reported) and ends.
  const end = () => held.end();
  process.stdin.on("end", end);
  process.stdin.on("close", end);
  // A signal before it is made ends the process at once: nothing of this server runs yet (what its start-up left
  // half-done the next start does again, as after a kill). Once made, serve's own handlers close it.
  const quit = () => {
    if (!held.released) process.exit(0);
  };
  process.on("SIGTERM", quit);
  process.on("SIGINT", quit);
  await held.wanted;
  const main = await import("./main.js");
  await main.serve({ server, transport, held }).catch(main.fail);
}
