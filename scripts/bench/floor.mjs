/**
 * The interactive floor (issue 38): the CLI alone in a private tmux pane, the prompt on its command line, only a
 * Stop hook (this package's locked append); no server. Timed from `tmux new-session` to the Stop line in its log,
 * which is what a cold tmux first answer through the server is compared with. `hookSet`: the server's whole hook set
 * and deny rules instead of the Stop hook alone (the CLI's part of the gap); `settingsOf(eventsPath, hookCommand)`:
 * a settings object of the caller's (with `tag`, its files' prefix).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sutPath } from "./world.mjs";

export async function makeFloor({ root, home, env, cli, socket, hookSet = false, settingsOf, tag: named }) {
  // Files of their own per floor maker (two makers share a root in parallel-cpu.mjs --hooks).
  const tag = named ?? (hookSet ? "floorset" : "floor");
  const { hookCommand, hooksSettings } = await import(sutPath("dist", "claude", "hooks.js"));
  // util/proc/shell.js since util/ was split into fs/ and proc/; an earlier build (a before/after run) has util/shell.js.
  const shell = [sutPath("dist", "util", "proc", "shell.js"), sutPath("dist", "util", "shell.js")].find((p) => existsSync(p));
  const { shQuote } = await import(shell);
  const tmux = (args, input) =>
    spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8", input, env: { PATH: process.env.PATH, HOME: home } });
  // One tmux server for every run (a session that sleeps keeps it up).
  tmux(["new-session", "-d", "-s", "keep", "sleep 100000"]);
  let n = 0;
  return {
    /**
     * One cold first answer (new-session → Stop); with `followUp`, also the floor's follow-up turn in the same pane:
     * the text typed with `send-keys -l`, Enter once the pane shows it (as any driver must wait for), → the second
     * Stop. Returns the first answer's ms, or [first, follow-up…] with followUp (one text or several, each sent at the
     * Stop before it). `paste`: a follow-up goes in as the server sends it (load-buffer + paste-buffer -p, one
     * bracketed paste) instead of typed keys.
     */
    async run(dir, prompt, followUp, { paste = false } = {}) {
      const k = n++;
      const events = join(root, `${tag}-${k}.jsonl`);
      const settings = join(root, `${tag}-${k}.settings.json`);
      // hookSet: the hook set and deny rules the server gives a tmux session (no permission hook: no tool runs here).
      writeFileSync(
        settings,
        JSON.stringify(
          settingsOf
            ? settingsOf(events, hookCommand(events))
            : hookSet
              ? hooksSettings(events, undefined, { backgroundStart: true })
              : { hooks: { Stop: [{ matcher: "*", hooks: [{ type: "command", command: hookCommand(events) }] }] } },
        ),
      );
      const cmd = [
        "env",
        ...Object.entries(env).map(([key, v]) => `${key}=${v}`),
        cli,
        "--settings",
        settings,
        "--permission-mode",
        "default",
        "--",
        prompt,
      ]
        .map(shQuote)
        .join(" ");
      const name = `floor-${k}`;
      const t0 = performance.now();
      tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir, cmd]);
      const stops = () => (existsSync(events) ? readFileSync(events, "utf8").split('"hook_event_name":"Stop"').length - 1 : 0);
      const until = async (ok, t, what) => {
        for (;;) {
          if (ok()) return performance.now() - t;
          if (performance.now() - t > 60_000) throw new Error(`the floor's CLI: ${what} not within 60 s`);
          await new Promise((r) => setTimeout(r, 2));
        }
      };
      try {
        const first = await until(() => stops() >= 1, t0, "no Stop");
        if (followUp === undefined) return first;
        const out = [first];
        // Each follow-up goes in the moment the Stop before it lands, as a caller answered at Stop sends its next.
        for (const text of Array.isArray(followUp) ? followUp : [followUp]) {
          const t1 = performance.now();
          if (paste)
            tmux(["load-buffer", "-b", `floor-${k}`, "-", ";", "paste-buffer", "-p", "-d", "-b", `floor-${k}`, "-t", name], text);
          else tmux(["send-keys", "-t", name, "-l", text]);
          await until(() => tmux(["capture-pane", "-p", "-t", name]).stdout.includes(text), t1, "the text not shown");
          tmux(["send-keys", "-t", name, "Enter"]);
          out.push(await until(() => stops() >= out.length + 1, t1, "no Stop of the follow-up"));
        }
        return out;
      } finally {
        tmux(["kill-session", "-t", name]);
      }
    },
    close() {
      tmux(["kill-server"]);
    },
  };
}
