/**
 * The interactive floor (issue 38): the CLI alone in a private tmux pane, the prompt on its command line, only a
 * Stop hook (this package's locked append); no server. Timed from `tmux new-session` to the Stop line in its log,
 * which is what a cold tmux first answer through the server is compared with.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sutPath } from "./world.mjs";

export async function makeFloor({ root, home, env, cli, socket }) {
  const { hookCommand } = await import(sutPath("dist", "claude", "hooks.js"));
  // util/proc/shell.js since util/ was split into fs/ and proc/; an earlier build (a before/after run) has util/shell.js.
  const shell = [sutPath("dist", "util", "proc", "shell.js"), sutPath("dist", "util", "shell.js")].find((p) => existsSync(p));
  const { shQuote } = await import(shell);
  const tmux = (args) => spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: home } });
  // One tmux server for every run (a session that sleeps keeps it up).
  tmux(["new-session", "-d", "-s", "keep", "sleep 100000"]);
  let n = 0;
  return {
    async run(dir, prompt) {
      const k = n++;
      const events = join(root, `floor-${k}.jsonl`);
      const settings = join(root, `floor-${k}.settings.json`);
      writeFileSync(settings, JSON.stringify({ hooks: { Stop: [{ matcher: "*", hooks: [{ type: "command", command: hookCommand(events) }] }] } }));
      const cmd = ["env", ...Object.entries(env).map(([key, v]) => `${key}=${v}`), cli, "--settings", settings, "--permission-mode", "default", "--", prompt].map(shQuote).join(" ");
      const name = `floor-${k}`;
      const t0 = performance.now();
      tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir, cmd]);
      try {
        for (;;) {
          if (existsSync(events) && readFileSync(events, "utf8").includes('"hook_event_name":"Stop"')) return performance.now() - t0;
          if (performance.now() - t0 > 60_000) throw new Error(`the floor's CLI gave no Stop in 60 s`);
          await new Promise((r) => setTimeout(r, 2));
        }
      } finally {
        tmux(["kill-session", "-t", name]);
      }
    },
    close() {
      tmux(["kill-server"]);
    },
  };
}
