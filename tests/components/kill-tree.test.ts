/**
 * kill_session ends the session's whole process tree (issue #16, fault 10): children that left the
 * process group with setsid (a dev server Claude started) and daemons whose parent exited (re-parented to
 * init, found by the session's environment tag) are ended too, on real tmux (private socket) and node-pty.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TerminalHost } from "../../src/runners/host.js";
import { TmuxHost } from "../../src/runners/terminal/tmux/tmux.js";
import { installScripts } from "../../src/app.js";
import { hasPty, hasTmux, until } from "../helpers/harness.js";

const root = mkdtempSync(join(tmpdir(), "cs-killtree-"));
const socket = `cs-test-kt-${process.pid}`;
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL"); // only processes this test started (found by their unique arguments)
    } catch {
      /* gone */
    }
  }
  spawnSync("tmux", ["-L", socket, "kill-server"]);
  rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** Pids of `sleep <n>` processes with exactly this argument. */
function sleepers(arg: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (argv[0]?.endsWith("sleep") && argv[1] === arg && !/\) Z /.test(stat)) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

const backends: Array<[string, () => Promise<TerminalHost | undefined>]> = [
  [
    "tmux",
    async () => {
      if (!hasTmux()) return undefined;
      const scripts = await installScripts(join(root, "st"));
      return new TmuxHost({ socketName: socket, hookScript: scripts.hook, launchScript: scripts.launch });
    },
  ],
  [
    "pty",
    async () => {
      if (!(await hasPty())) return undefined;
      const { PtyHost } = await import("../../src/runners/terminal/pty/pty.js");
      return new PtyHost({ hookScript: (await installScripts(join(root, "sp"))).hook });
    },
  ],
];

describe.each(backends)("kill on %s", (kind, make) => {
  it("ends children that setsid away and daemons re-parented to init, and reports nothing left", async () => {
    const b = await make();
    if (!b) {
      console.warn(`*** ${kind} is not available here: this kill test has nothing to run on ***`);
      expect(process.env.CI).toBeFalsy();
      return;
    }
    const id = `kt${kind}${process.pid}`;
    const n = String(40_000 + (process.pid % 10_000) * 3 + (kind === "tmux" ? 0 : 1));
    const [a, d, m] = [`${n}1`, `${n}2`, `${n}3`];
    // The session's environment carries its tag, as the orchestrator's session environment does.
    const script = `export CLAUDE_SESSIONS_ID=${id}; setsid sleep ${a} & (setsid sh -c 'sleep ${d} & exit' &); exec sleep ${m}`;
    const events = join(root, `${kind}.jsonl`);
    await b.spawn({
      id,
      dir: root,
      argv: ["/bin/sh", "-c", script],
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
      cols: 80,
      rows: 24,
      rawLogPath: join(root, `${kind}.log`),
      eventsPath: events,
    });
    await until(() => sleepers(a).length === 1 && sleepers(d).length === 1 && sleepers(m).length === 1, 10_000);
    started.push(...sleepers(a), ...sleepers(d), ...sleepers(m));
    const res = await b.kill(id, { graceMs: 500 });
    expect(res.left ?? []).toEqual([]);
    expect({ setsid: sleepers(a), daemon: sleepers(d), main: sleepers(m) }).toEqual({ setsid: [], daemon: [], main: [] });
    await b.remove(id);
    await b.close?.();
  }, 30_000);
});
