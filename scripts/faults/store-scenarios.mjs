/**
 * Fault scenarios at the level of the store and the events log (no server): each takes the number of
 * runs and resolves to { runs, failures, worstRecoveryMs, notes[] }. They use the built code in dist/.
 */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../dist/store/store.js";
import { hookCommand } from "../../dist/claude/hooks.js";
import { EventTail } from "../../dist/events/eventlog.js";
import { acquireFileLock } from "../../dist/util/proc/flock.js";
import { quietLog as quiet, seedCounter, tempStateDir } from "../../tests/helpers/store-setup.mjs";

const HERE = import.meta.dirname;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rand = (a, b) => a + Math.floor(Math.random() * (b - a));

function tmp(label) {
  return mkdtempSync(join(tmpdir(), `cs-faults-${label}-`));
}

function writer(dir, n, staleMs) {
  const c = spawn(process.execPath, [join(HERE, "store-writer.mjs"), dir, String(n), ...(staleMs ? [String(staleMs)] : [])], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const w = { child: c, acks: 0, err: "", exited: new Promise((r) => c.on("exit", (code, sig) => r(code ?? sig))) };
  c.stdout.on("data", (b) => (w.acks += (b.toString().match(/ack/g) ?? []).length));
  c.stderr.on("data", (b) => (w.err += b));
  return w;
}

/** kill -9 of one of three processes updating state.json at a random moment: the file parses, no acknowledged update is lost. */
export async function kill9Store(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  for (let i = 0; i < runs; i++) {
    const { root, dir } = tempStateDir("faults-k9");
    try {
      const s = new Store(dir, quiet);
      await seedCounter(s);
      const ws = [writer(dir, 60), writer(dir, 60), writer(dir, 60)];
      await sleep(rand(30, 400));
      const victim = ws[rand(0, 3)];
      victim.child.kill("SIGKILL");
      const t0 = performance.now();
      await s.update((st) => void (st.sessions.counter.turn_count += 1000));
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, performance.now() - t0);
      await Promise.all(ws.map((w) => w.exited));
      const parsed = JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
      const got = parsed.sessions.counter.turn_count - 1000;
      const acked = ws.reduce((a, w) => a + w.acks, 0);
      // The killed writer may have written one update it never got to acknowledge.
      if (got < acked || got > acked + 1) {
        out.failures++;
        out.notes.push(`run ${i}: counter ${got}, acknowledged ${acked}`);
      }
      for (const w of ws) if (w !== victim && w.err) out.notes.push(`run ${i}: ${w.err.trim().slice(0, 200)}`);
    } catch (e) {
      out.failures++;
      out.notes.push(`run ${i}: ${String(e).slice(0, 200)}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return out;
}

/** SIGSTOP of a process holding the lock past the stale time while another works; SIGCONT: both survive, nothing lost. */
export async function sigstopLock(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  for (let i = 0; i < runs; i++) {
    const { root, dir } = tempStateDir("faults-stop");
    try {
      const s = new Store(dir, quiet, { staleMs: 2000 });
      await seedCounter(s);
      const w = writer(dir, 40, 2000);
      while (w.acks < rand(1, 20)) await sleep(2);
      w.child.kill("SIGSTOP");
      const t0 = performance.now();
      await s.update((st) => void (st.sessions.counter.turn_count += 1000));
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, performance.now() - t0);
      await sleep(rand(0, 1500));
      w.child.kill("SIGCONT");
      const code = await w.exited;
      const got = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")).sessions.counter.turn_count;
      if (code !== 0 || got !== 1040) {
        out.failures++;
        out.notes.push(`run ${i}: writer exit ${code}, counter ${got} (want 1040) ${w.err.trim().slice(0, 200)}`);
      }
    } catch (e) {
      out.failures++;
      out.notes.push(`run ${i}: ${String(e).slice(0, 200)}`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  return out;
}

async function readEvents(path) {
  const got = [];
  const t = new EventTail(
    path,
    (evs) => got.push(...evs),
    () => {},
  );
  await t.start();
  t.close();
  return got;
}

/** A hook killed (-9) half-way through writing its line: the next event still arrives whole. */
export async function hookKilled(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const root = tmp("hook");
  try {
    for (let i = 0; i < runs; i++) {
      const events = join(root, `e${i}.jsonl`);
      writeFileSync(events, "");
      const big = JSON.stringify({
        session_id: "c",
        hook_event_name: "PostToolUse",
        tool_response: "r".repeat(rand(10_000, 200_000)),
      });
      const h = spawn("/bin/sh", ["-c", hookCommand(events)], { stdio: ["pipe", "ignore", "ignore"], detached: true });
      h.stdin.on("error", () => {}); // the writer is killed mid-write on purpose: its pipe may close under us
      const cut = rand(1, big.length - 1);
      h.stdin.write(big.slice(0, cut));
      await sleep(rand(1, 20));
      try {
        process.kill(-h.pid, "SIGKILL"); // the hook's own process group: sh/flock/paste
      } catch {
        /* gone */
      }
      await new Promise((r) => h.on("close", r));
      // Some of the payload may have reached the file: the torn line of a killed writer.
      if (Math.random() < 0.5) appendFileSync(events, big.slice(0, rand(1, 500)));
      const stop = JSON.stringify({ session_id: "c", hook_event_name: "Stop", n: i });
      execFileSync("/bin/sh", ["-c", hookCommand(events)], { input: stop });
      const evs = await readEvents(events);
      const last = evs.at(-1);
      if (last?.hook_event_name !== "Stop" || last.n !== i) {
        out.failures++;
        out.notes.push(`run ${i}: the Stop after the tear was not read (${JSON.stringify(evs.map((e) => e.hook_event_name))})`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}

/** ENOSPC on the state directory (a 1 MiB tmpfs): updates fail cleanly, state.json stays whole, writes resume when space returns. */
export async function enospc(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const mnt = tmp("nospc");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", mnt], { stdio: "ignore" });
  } catch {
    rmSync(mnt, { recursive: true, force: true });
    return {
      runs: 0,
      failures: 0,
      worstRecoveryMs: 0,
      notes: ["not run: mounting a 1 MiB tmpfs needs root (mount -t tmpfs -o size=1m)"],
    };
  }
  try {
    for (let i = 0; i < runs; i++) {
      const dir = join(mnt, `s${i}`);
      const s = new Store(dir, quiet);
      await seedCounter(s);
      const filler = join(mnt, "filler");
      try {
        writeFileSync(filler, Buffer.alloc(2 * 1024 * 1024));
      } catch {
        /* filled up to ENOSPC: what is written stays */
      }
      let failed = false;
      try {
        await s.update((st) => {
          st.sessions.counter.turn_count += 1;
          st.sessions.counter.error_log = ["x".repeat(64 * 1024)];
        });
      } catch (e) {
        failed = /ENOSPC/.test(String(e));
      }
      const parsed = JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
      if (!failed || parsed.sessions.counter.turn_count !== 0) {
        out.failures++;
        out.notes.push(
          `run ${i}: update on a full disk ${failed ? "failed" : "did not fail with ENOSPC"}, counter ${parsed.sessions.counter.turn_count}`,
        );
      }
      rmSync(filler, { force: true });
      const t0 = performance.now();
      await s.update((st) => void (st.sessions.counter.turn_count += 1));
      out.worstRecoveryMs = Math.max(out.worstRecoveryMs, performance.now() - t0);
      if ((await s.get("counter")).turn_count !== 1) {
        out.failures++;
        out.notes.push(`run ${i}: the update after space returned was not written`);
      }
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    try {
      execFileSync("umount", [mnt], { stdio: "ignore" });
    } catch {
      /* leave it for a person: it is a temp dir of ours */
    }
    rmSync(mnt, { recursive: true, force: true });
  }
  return out;
}

/** Four processes sending to one session at once through the send lock: no two paste+Enter sections overlap. */
export async function sendLock(runs) {
  const out = { runs, failures: 0, worstRecoveryMs: 0, notes: [] };
  const root = tmp("send");
  try {
    for (let i = 0; i < runs; i++) {
      const lock = join(root, `send${i}.lock`);
      const screen = join(root, `screen${i}.txt`);
      writeFileSync(screen, "");
      const script = `import("${join(HERE, "../../dist/util/proc/flock.js")}").then(async (m) => {
        const fs = await import("node:fs");
        for (let k = 0; k < 10; k++) await m.withFileLock(${JSON.stringify(lock)}, async () => {
          fs.appendFileSync(${JSON.stringify(screen)}, "paste " + process.pid + "\\n");
          await new Promise((r) => setTimeout(r, Math.random() * 5));
          fs.appendFileSync(${JSON.stringify(screen)}, "enter " + process.pid + "\\n");
        });
      });`;
      await Promise.all(
        Array.from(
          { length: 4 },
          () => new Promise((r) => spawn(process.execPath, ["-e", script], { stdio: "ignore" }).on("exit", r)),
        ),
      );
      const lines = readFileSync(screen, "utf8").trim().split("\n");
      let merged = 0;
      for (let k = 0; k < lines.length; k += 2) if (lines[k + 1] !== lines[k].replace("paste", "enter")) merged++;
      if (lines.length !== 80 || merged) {
        out.failures++;
        out.notes.push(`run ${i}: ${lines.length / 2} prompts, ${merged} merged`);
      }
    }
    // And a holder killed with -9 frees it.
    const lock = join(root, "k.lock");
    const c = spawn(
      process.execPath,
      [
        "-e",
        `import("${join(HERE, "../../dist/util/proc/flock.js")}").then(async (m) => { await m.acquireFileLock(${JSON.stringify(lock)}); console.log("held"); setInterval(() => {}, 1e4); });`,
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    await new Promise((r) => c.stdout.on("data", r));
    c.kill("SIGKILL");
    const t0 = performance.now();
    await (await acquireFileLock(lock, { timeoutMs: 10_000 })).release();
    out.worstRecoveryMs = performance.now() - t0;
  } catch (e) {
    out.failures++;
    out.notes.push(String(e).slice(0, 200));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return out;
}
