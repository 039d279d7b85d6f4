/**
 * The baseline: a completion detector that polls the screen, as screen-scraping orchestrators do.
 * Every `periodMs` (fixed rate, first poll at `phaseMs`) it runs `tmux capture-pane -p` on the
 * session's pane and calls the turn finished once the screen shows Claude's idle input line and no
 * busy footer ("esc to interrupt"). It is started only after the turn is known to be running.
 */
import { execFile } from "node:child_process";

/** Claude Code's idle screen: the `❯` input line (followed by a no-break space) and no busy footer. */
export function looksIdle(screen) {
  return /^❯[\s\u00a0]/m.test(screen) && !/esc to interrupt/i.test(screen) && !/Do you want to proceed\?/.test(screen);
}

function capture(socket, env, target) {
  return new Promise((resolve) => {
    execFile("tmux", ["-L", socket, "capture-pane", "-p", "-t", target], { encoding: "utf8", env }, (err, stdout) =>
      resolve(err ? "" : stdout),
    );
  });
}

/**
 * Polls until the screen looks idle. Resolves with {t, polls} (t = performance.now() when the
 * capture that showed idle returned), or {t: undefined} after timeoutMs.
 */
export function pollUntilIdle({ socket, home, sessionId, periodMs, phaseMs, timeoutMs = 30_000 }) {
  const env = { PATH: process.env.PATH ?? "", HOME: home, LANG: "C.UTF-8" };
  const target = `=cs-${sessionId}:`;
  const t0 = performance.now();
  return new Promise((resolve) => {
    let k = 0;
    let polls = 0;
    let timer;
    const schedule = () => {
      const due = t0 + phaseMs + k * periodMs;
      k += 1;
      timer = setTimeout(tick, Math.max(0, due - performance.now()));
    };
    const tick = async () => {
      polls += 1;
      const screen = await capture(socket, env, target);
      const t = performance.now();
      if (looksIdle(screen)) return resolve({ t, polls });
      if (t - t0 > timeoutMs) return resolve({ t: undefined, polls });
      // Fixed rate: a slow capture does not shift later polls (a missed slot is skipped).
      while (t0 + phaseMs + k * periodMs < performance.now()) k += 1;
      schedule();
    };
    schedule();
    void timer;
  });
}
