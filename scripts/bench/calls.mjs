/**
 * Calls the real-CLI benches share (phases/first-answer.mjs, first-answer-ab.mjs, issue38-ab.mjs): a bare `claude -p`
 * timed to its answer, a tool call that must succeed, a timed step, a tmux start with its prompt to its reply, and the
 * one-tool SDK peer's start.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

/** A bare `claude -p` against the mock: spawn → the answer on its stdout, in ms. */
export function claudeP(cli, cwd, env, prompt) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(cli, ["-p", prompt, "--permission-mode", "default"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let so = "";
    let se = "";
    let at;
    c.stdout.on("data", (b) => {
      so += b;
      if (at === undefined && so.includes(`MOCK REPLY: ${prompt}`)) at = performance.now() - t0;
    });
    c.stderr.on("data", (b) => (se += b));
    c.on("exit", (code) =>
      at !== undefined ? resolve(at) : reject(new Error(`claude -p exited ${code} without the answer: ${(so + se).slice(-300)}`)),
    );
  });
}

/** A tool call that must succeed (and pass `check`, when given); resolves to its data. */
export async function okCall(m, name, args, check) {
  const r = await m.call(name, args);
  if (!r.ok) throw new Error(`${name}: ${r.error?.code}: ${r.error?.message?.split("\n")[0]}`);
  if (check && !check(r.data)) throw new Error(`${name}: unexpected result ${JSON.stringify(r.data).slice(0, 300)}`);
  return r.data;
}

/** Runs `fn`; resolves to [its ms, its result]. */
export const timed = async (fn) => {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
};

/** start_session (tmux) with the prompt, then wait_for_completion until its reply; resolves to the session id. */
export async function tmuxWithPrompt(m, cwd, prompt) {
  const s = await okCall(m, "start_session", { cwd, backend: "tmux", permission_mode: "default", prompt });
  await okCall(
    m,
    "wait_for_completion",
    { session_id: s.session_id, timeout_ms: 60_000 },
    (d) => d.last_response === `MOCK REPLY: ${prompt}`,
  );
  return s.session_id;
}

/** User + system CPU of a live process, in ms (from /proc; 0 where there is none). */
export function cpuMs(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** Spawn → initialize → tools/list of the one-tool SDK peer; returns its CPU time. */
export async function peerList() {
  const tr = new StdioClientTransport({
    command: process.execPath,
    args: [resolve(import.meta.dirname, "peer-server.mjs")],
    stderr: "ignore",
  });
  const c = new Client({ name: "bench", version: "1.0.0" });
  await c.connect(tr);
  await c.listTools();
  return { cpu: cpuMs(tr.pid), close: () => c.close() };
}
