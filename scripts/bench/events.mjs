/**
 * The bench's own view of a session's events.jsonl: fs.watch on the file, incremental reads, and a
 * timestamp per complete line. A line's time is the moment of the fs.watch callback that triggered
 * the read which first saw that line complete (taken synchronously in the callback, before any
 * I/O), i.e. when the hook's write became visible to a watcher on this machine.
 */
import { readdirSync, readFileSync, watch } from "node:fs";
import { open } from "node:fs/promises";
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";

export class EventWatcher {
  constructor(path) {
    this.path = path;
    this.offset = 0;
    this.partial = Buffer.alloc(0);
    /** @type {Array<{ev: any, t: number, index: number}>} */
    this.events = [];
    this.waiters = new Set();
    this.pendingT = undefined;
    this.reading = false;
    this.again = false;
    this.closed = false;
  }

  async start() {
    this.watcher = watch(this.path, { persistent: false }, () => {
      this.pendingT ??= performance.now();
      void this.read();
    });
    this.pendingT = performance.now();
    await this.read();
  }

  get count() {
    return this.events.length;
  }

  async read() {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        const t = this.pendingT ?? performance.now();
        this.pendingT = undefined;
        const fh = await open(this.path, "r");
        try {
          const { size } = await fh.stat();
          if (size > this.offset) {
            const buf = Buffer.alloc(size - this.offset);
            const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
            this.offset += bytesRead;
            // Split on newline BYTES and decode whole lines only: a read can end inside a
            // multi-byte character while the hook is still writing a long line.
            const all = Buffer.concat([this.partial, buf.subarray(0, bytesRead)]);
            const cut = all.lastIndexOf(0x0a);
            if (cut < 0) this.partial = all;
            else {
              this.partial = Buffer.from(all.subarray(cut + 1));
              for (const line of all.subarray(0, cut).toString("utf8").split("\n")) {
                if (!line.trim()) continue;
                let ev;
                try {
                  ev = JSON.parse(line);
                } catch {
                  ev = { hook_event_name: "(unparseable)", raw: line };
                }
                const rec = { ev, t, index: this.events.length };
                this.events.push(rec);
                for (const w of [...this.waiters]) w(rec);
              }
            }
          }
        } finally {
          await fh.close();
        }
      } while ((this.again || this.pendingT !== undefined) && !this.closed);
    } finally {
      this.reading = false;
    }
  }

  /**
   * The first event at index ≥ from that satisfies pred (already seen or still to come), or
   * undefined after timeoutMs.
   */
  waitFor(pred, { from = 0, timeoutMs = 30_000 } = {}) {
    for (let i = from; i < this.events.length; i++) if (pred(this.events[i].ev)) return Promise.resolve(this.events[i]);
    return new Promise((resolve) => {
      const w = (rec) => {
        if (rec.index >= from && pred(rec.ev)) done(rec);
      };
      const done = (rec) => {
        clearTimeout(timer);
        this.waiters.delete(w);
        resolve(rec);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.waiters.add(w);
    });
  }

  close() {
    this.closed = true;
    this.watcher?.close();
    for (const w of this.waiters) this.waiters.delete(w);
  }
}

/** Descendants of `root` (pids), from /proc. */
function descendants(root) {
  const kids = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = st.lastIndexOf(")");
      const comm = st.slice(st.indexOf("(") + 1, close);
      const ppid = Number(st.slice(close + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push({ pid: Number(d), comm });
    } catch {
      /* gone */
    }
  }
  const out = [];
  const walk = (p) => {
    for (const k of kids.get(p) ?? []) {
      out.push(k);
      walk(k.pid);
    }
  };
  walk(root);
  return out;
}

/** The hook command the server put in the session's settings.json (what Claude Code runs, through sh). */
export function hookCommandFor(eventsPath) {
  const s = JSON.parse(readFileSync(join(dirname(eventsPath), "settings.json"), "utf8"));
  return s.hooks.Stop[0].hooks[0].command;
}

/**
 * Starts a hook exactly as Claude Code runs one (`/bin/sh -c <the settings' command>`, payload on
 * stdin) but holds the payload back until it has taken its lock and its `paste` is waiting
 * on stdin. `write()` then hands the payload over (the moment the line is written, give or take
 * one pipe read) and resolves with the time the script exited. `spawnedAt` is when it was started.
 */
export async function primedHook(_hookScript, eventsPath, { readyTimeoutMs = 2000 } = {}) {
  const command = hookCommandFor(eventsPath);
  const spawnedAt = performance.now();
  const child = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "ignore", "pipe"] });
  let err = "";
  child.stderr.on("data", (b) => (err += b));
  const exited = new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(performance.now()) : reject(new Error(`hook exited ${code}: ${err}`))));
  });
  const end = performance.now() + readyTimeoutMs;
  let ready = false;
  while (performance.now() < end) {
    if (descendants(child.pid).some((p) => p.comm === "paste")) {
      ready = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  return {
    spawnedAt,
    readyAt: performance.now(),
    ready,
    write(payload) {
      child.stdin.end(JSON.stringify(payload) + "\n");
      return exited;
    },
  };
}

/**
 * Appends one event line exactly as a Claude Code hook does: runs the settings' hook command through
 * sh with the payload as one JSON line on stdin. Resolves with the time the
 * script exited (the line is in the file by then).
 */
export function appendViaHook(_hookScript, eventsPath, payload) {
  const command = hookCommandFor(eventsPath);
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (b) => (err += b));
    child.on("error", reject);
    child.on("close", (code) => {
      const t = performance.now();
      if (code !== 0) reject(new Error(`hook exited ${code}: ${err}`));
      else resolve(t);
    });
    child.stdin.end(JSON.stringify(payload) + "\n");
  });
}
