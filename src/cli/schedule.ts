/**
 * `claude-sessions schedule`: the schedule tools from a shell, through server/call.ts like every other caller (the
 * audit line names the unix user). Schedules fire only while a server runs (serve, or the service).
 */
import type { App } from "../app.js";
import { SessionError } from "../core/errors.js";
import { callTool } from "../server/call.js";
import { changeScheduleTool, listSchedulesTool, scheduleTask } from "../server/tools/schedules.js";

export const SCHEDULE_HELP =
  `  claude-sessions schedule add <name> (--every 5m | --cron "0 7 * * 1-5" | --at <ISO time>) ` +
  `(--cwd <dir> | --send-to <session id>) --prompt <text>
                           [--backend tmux|pty|headless] [--model M] [--overlap skip|queue] [--catch-up once|skip]
  claude-sessions schedule [list [<name>]] | pause <name> | resume <name> | delete <name>
                                  schedules run run_task (or send to a session) while a server runs (serve, or service install)`;

const FLAGS: Record<string, string> = {
  "--every": "every",
  "--cron": "cron",
  "--at": "at",
  "--cwd": "cwd",
  "--prompt": "prompt",
  "--backend": "backend",
  "--model": "model",
  "--overlap": "overlap",
  "--catch-up": "catch_up",
  "--permission-mode": "permission_mode",
  "--send-to": "send_to",
};

function usage(): SessionError {
  return new SessionError("INVALID_ARGUMENT", `usage:\n${SCHEDULE_HELP}`, { suggestion: "See claude-sessions --help." });
}

export async function runScheduleCommand(args: string[], app: App, actor: string, print: (v: unknown) => void): Promise<number> {
  const [sub = "list", ...rest] = args;
  const ctx = { actor };
  if (sub === "list") {
    if (rest.length > 1) throw usage();
    const r = await callTool(app.sessions, listSchedulesTool, rest[0] ? { name: rest[0] } : {}, ctx);
    for (const s of r.schedules) {
      const last = s.runs.at(-1);
      const timing = s.cron ? `cron ${s.cron}` : s.every ? `every ${s.every}` : `at ${s.at}`;
      const next = s.paused ? "paused" : `next ${s.next_at ?? "none"}`;
      const cost = last?.cost_usd !== undefined ? ` $${last.cost_usd.toFixed(4)}` : "";
      const lastRun = last ? `  last: ${last.outcome} ${last.due_at}${cost}` : "";
      const to = s.send_to
        ? `→ ${"session_id" in s.send_to ? s.send_to.session_id : `${s.send_to.team_name}/${s.send_to.teammate_name}`}`
        : s.cwd;
      print(`${s.name}  ${timing}  ${next}${s.running ? "  running" : ""}  ${to}${lastRun}`);
    }
    if (!r.schedules.length) print("no schedules");
    return 0;
  }
  if (sub === "pause" || sub === "resume" || sub === "delete") {
    if (rest.length !== 1) throw usage();
    print(await callTool(app.sessions, changeScheduleTool, { name: rest[0], action: sub }, ctx));
    return 0;
  }
  if (sub !== "add" || !rest[0] || rest[0].startsWith("--")) throw usage();
  const input: Record<string, unknown> = { name: rest[0] };
  for (let i = 1; i < rest.length; i += 2) {
    const key = FLAGS[rest[i]!];
    const value = rest[i + 1];
    if (!key || value === undefined) throw usage();
    // --send-to names a session by its id (the MCP tool also takes a team address).
    input[key] = key === "send_to" ? { session_id: value } : value;
  }
  print(await callTool(app.sessions, scheduleTask, input, ctx));
  return 0;
}
