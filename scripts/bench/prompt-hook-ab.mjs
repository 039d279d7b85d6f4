#!/usr/bin/env node
/**
 * Issue 38: what UserPromptSubmit in the background (claude/hooks.ts) saves the interactive CLI, without the
 * server. The CLI alone in a private tmux pane (floor.mjs), the prompt on its command line, then `--follow`
 * follow-ups each typed the moment the Stop before lands; three hook sets interleaved run by run:
 *   stop     the Stop hook only (the floor)
 *   sync     the server's set before: every event synchronous but a start's SessionStart
 *   bg       the server's set now: UserPromptSubmit `async: true`, the turn's next events waiting for its line
 * Prints p50 / p95 of the first answer and of the follow-ups per set, and each set ÷ stop.
 *   npm run build && node scripts/bench/prompt-hook-ab.mjs [--runs=12] [--follow=3]
 */
import { join } from "node:path";
import { round, summary } from "./stats.mjs";
import { cleanupAll, makeWorld } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";
import { makeFloor } from "./floor.mjs";
import { hooksSettings } from "../../dist/claude/hooks.js";

const opt = (name, d) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d);
const RUNS = opt("runs", 12);
const FOLLOW = opt("follow", 3);
const w = makeWorld("prompt-hook-ab");
const dir = w.dir("cwd");
const setup = await realSetup(w, [dir]);
const env = Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH"));
delete env.PATH;
const base = { root: w.root, home: w.home, env, cli: setup.cli.path, socket: w.socket };
const sets = {
  stop: await makeFloor({ ...base, tag: "stop" }),
  sync: await makeFloor({ ...base, tag: "sync", settingsOf: (ev) => hooksSettings(ev, undefined, { backgroundStart: true }) }),
  bg: await makeFloor({
    ...base,
    tag: "bg",
    settingsOf: (ev) => hooksSettings(ev, undefined, { backgroundStart: true, backgroundPrompt: true }),
  }),
};
const names = Object.keys(sets);
const first = Object.fromEntries(names.map((n) => [n, []]));
const follow = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 ? [...names].reverse() : names;
    for (const n of order) {
      const texts = Array.from({ length: FOLLOW }, (_, k) => `${n} ${i} follow ${k}`);
      const [a, ...f] = await sets[n].run(dir, `${n} ${i} first`, texts);
      first[n].push(a);
      follow[n].push(...f);
    }
    process.stderr.write(`run ${i + 1}/${RUNS}\n`);
  }
} finally {
  for (const s of Object.values(sets)) s.close();
  await setup.close();
  cleanupAll();
}
const p = (xs) => summary(xs);
console.log(`CLI ${setup.cli.version}; ${RUNS} runs, ${FOLLOW} follow-ups each; p50 / p95 ms (÷ stop's p50)`);
console.log("| set | first answer | follow-up |\n| --- | --- | --- |");
for (const n of names) {
  const [a, f] = [p(first[n]), p(follow[n])];
  console.log(
    `| ${n} | ${round(a.p50)} / ${round(a.p95)} (${(a.p50 / p(first.stop).p50).toFixed(2)}×) | ${round(f.p50)} / ${round(f.p95)} (${(f.p50 / p(follow.stop).p50).toFixed(2)}×) |`,
  );
}
