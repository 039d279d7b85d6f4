#!/usr/bin/env node
/**
 * Entry point. The server runs with a small V8 young generation: measured with 50 sessions × 10 turns, peak RSS
 * fell from 150 MB to 102 MB with no slower turns (npm run bench, scale row). Flags must be given at start-up,
 * so the server re-executes itself once with the flag (process.execve: same pid, same stdio, nothing read yet).
 * CLAUDE_SESSIONS_NO_REEXEC=1, or any --max-semi-space-size already given, keeps the process as it is.
 */
import { statSync } from "node:fs";
import { enableCompileCache } from "node:module";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

const FLAG = "--max-semi-space-size=2";
const serving = process.argv.length <= 2 || process.argv[2] === "serve";
const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((a) =>
  a.startsWith("--max-semi-space-size"),
);
const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
if (serving && !given && !process.env.CLAUDE_SESSIONS_NO_REEXEC && typeof execve === "function") {
  try {
    execve.call(
      process,
      process.execPath,
      [process.execPath, FLAG, ...process.execArgv, process.argv[1]!, ...process.argv.slice(2)],
      process.env,
    );
  } catch {
    /* exec refused (a sandbox, an odd platform): run as we are */
  }
}
// Compiled code of the modules is kept between runs (node's compile cache: a start compiles ~400 modules, the
// largest part of its CPU) in <state dir>/compile-cache, only when that directory is already this user's and
// private (0700; a cache others could write to would be code they run). NODE_DISABLE_COMPILE_CACHE=1 turns it off.
try {
  const dir = process.env.CLAUDE_SESSIONS_DIR || join(homedir(), ".claude", "sessions");
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st?.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0)
    enableCompileCache(join(resolve(dir), "compile-cache"));
} catch {
  /* no cache: the modules are compiled as before */
}
// A team member's own MCP server (started by a session's Claude Code) loads only what it needs; so does a stdio
// server until it has answered initialize and tools/list (cli/serve-early.ts).
if (process.argv[2] === "member") await (await import("./cli/member.js")).runMember();
else if (serving && !process.argv.includes("--http")) await (await import("./cli/serve-early.js")).serveStdio();
else await (await import("./cli/main.js")).runCli();
