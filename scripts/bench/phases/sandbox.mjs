/**
 * sandbox (issue 32): what the sandbox costs, the real CLI against the mock API, sandboxed and not in the same run,
 * interleaved repetition by repetition (so load drifts hit both alike), on tmux:
 *  - first answer: start_session {prompt} → wait_for_completion until the reply (the launcher's start-up, the
 *    runtime's proxies and bubblewrap are in this one);
 *  - follow-up: send_message on the same session → its reply (every API request through the launcher's proxy).
 * Targets (issue 32): sandboxed first answer ≤ 1.15×, follow-up ≤ 1.05× the unsandboxed p50. Skipped without
 * bubblewrap/socat/ripgrep or a CLI that runs, and unless --real or --only=sandbox is given.
 */
import { round, summary } from "../stats.mjs";
import { makeWorld, sutPath } from "../world.mjs";
import { realSetup } from "./real.mjs";

function skipped(cfg, why) {
  return [
    {
      key: "sandbox",
      figure: "sandboxed vs not: first answer, follow-up",
      runs: cfg.realRuns,
      notes: why,
      target: "reported",
      result: "SKIP",
    },
  ];
}

async function okCall(m, name, args, check) {
  const r = await m.call(name, args);
  if (!r.ok) throw new Error(`${name}: ${r.error?.code}: ${r.error?.message?.split("\n")[0]}`);
  if (check && !check(r.data)) throw new Error(`${name}: unexpected result ${JSON.stringify(r.data).slice(0, 300)}`);
  return r.data;
}

export async function sandbox(cfg, log) {
  const named = process.argv.some((a) => /^--only=(.*,)?sandbox(,|$)/.test(a));
  if (!cfg.real && !named) return skipped(cfg, "skipped: needs --real or --only=sandbox");
  const { sandboxDeps } = await import(sutPath("dist", "sandbox", "deps.js"));
  const deps = sandboxDeps();
  if (!deps.ok) return skipped(cfg, `skipped: ${deps.missing.join("; ")}`);
  const w = makeWorld("sandbox", {});
  const runs = cfg.realRuns;
  const dirs = { off: Array.from({ length: runs }, () => w.dir("off")), on: Array.from({ length: runs }, () => w.dir("on")) };
  let setup;
  let m;
  try {
    try {
      setup = await realSetup(w, [...dirs.off, ...dirs.on]);
    } catch (e) {
      return skipped(cfg, `skipped: ${e instanceof Error ? e.message : String(e)}`);
    }
    m = await w.connect();
    const first = { off: [], on: [] };
    const follow = { off: [], on: [] };
    for (let i = 0; i < runs; i++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      const order = i % 2 ? ["on", "off"] : ["off", "on"];
      for (const k of order) {
        const prompt = `bench sandbox ${k} ${i}`;
        const t0 = performance.now();
        const s = await okCall(
          m,
          "start_session",
          { cwd: dirs[k][i], backend: "tmux", permission_mode: "default", prompt, sandbox: k === "on" },
          (d) => (k === "on" ? d.sandboxed === true : d.sandboxed === undefined),
        );
        await okCall(
          m,
          "wait_for_completion",
          { session_id: s.session_id, timeout_ms: 60_000 },
          (d) => d.last_response === `MOCK REPLY: ${prompt}`,
        );
        const t1 = performance.now();
        const again = `${prompt} again`;
        await okCall(
          m,
          "send_message",
          { session_id: s.session_id, message: again, timeout_ms: 60_000 },
          (d) => d.response === `MOCK REPLY: ${again}`,
        );
        const t2 = performance.now();
        first[k].push(t1 - t0);
        follow[k].push(t2 - t1);
        await m.call("kill_session", { session_id: s.session_id });
        if (log)
          log(
            `sandbox: run ${i + 1}/${runs} ${k}: first answer ${(t1 - t0).toFixed(0)} ms, follow-up ${(t2 - t1).toFixed(0)} ms`,
          );
      }
    }
    const s = { fOff: summary(first.off), fOn: summary(first.on), uOff: summary(follow.off), uOn: summary(follow.on) };
    const ratio = (a, b) => a.p50 / b.p50;
    const stray = setup.mock.stray.length;
    const row = (key, figure, sum, notes, target, ok, data) => ({
      key,
      figure,
      runs: sum.n,
      ...sum,
      notes,
      target,
      result: target === "reported" ? "info" : ok ? "PASS" : "MISS",
      data,
    });
    return [
      row(
        "sb_first_off",
        `real CLI ${setup.cli.version} + mock, tmux: first answer (start_session {prompt} → reply), not sandboxed`,
        s.fOff,
        `${stray} stray request(s)`,
        "reported",
        true,
        { samples_ms: first.off.map(round) },
      ),
      row(
        "sb_first_on",
        "  same, sandboxed (launcher + proxies + bubblewrap)",
        s.fOn,
        `${ratio(s.fOn, s.fOff).toFixed(3)}× unsandboxed`,
        "≤ 1.15×",
        ratio(s.fOn, s.fOff) <= 1.15,
        { samples_ms: first.on.map(round) },
      ),
      row("sb_follow_off", "  follow-up turn (send_message → reply), not sandboxed", s.uOff, "", "reported", true, {
        samples_ms: follow.off.map(round),
      }),
      row(
        "sb_follow_on",
        "  same, sandboxed (every API request through the launcher's proxy)",
        s.uOn,
        `${ratio(s.uOn, s.uOff).toFixed(3)}× unsandboxed`,
        "≤ 1.05×",
        ratio(s.uOn, s.uOff) <= 1.05,
        { samples_ms: follow.on.map(round) },
      ),
    ];
  } finally {
    await m?.close();
    w.cleanup();
    await setup?.close();
  }
}
