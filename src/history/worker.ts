/** The indexer's worker thread: runs sync and rebuild requests one after another and reports progress. */
import { parentPort, workerData } from "node:worker_threads";
import { Indexer, type SyncStats } from "./indexer.js";
import type { WorkerReply, WorkerRequest } from "./runner.js";

// Checked by hand, not with zod: the thread loads only the indexer (zod alone is ~20 MB of memory).
const wd = workerData as { dbPath?: unknown; configDir?: unknown } | null;
if (typeof wd?.dbPath !== "string" || typeof wd.configDir !== "string")
  throw new Error("history worker: workerData needs dbPath and configDir strings");
const data = { dbPath: wd.dbPath, configDir: wd.configDir };
const port = parentPort;
if (!port) throw new Error("history/worker.js runs as a worker thread");
const send = (m: WorkerReply) => port.postMessage(m);

const indexer = new Indexer(data.dbPath, data.configDir, () => send({ type: "reset" }));
const queue: WorkerRequest[] = [];
let busy = false;

function run(req: WorkerRequest): SyncStats {
  if (req.op === "rebuild") indexer.reset();
  const gen = indexer.sync(req.op === "sync" ? req.paths : undefined);
  for (;;) {
    const step = gen.next();
    if (step.done) return step.value;
    send({ type: "progress", stats: step.value });
  }
}

function drain(): void {
  if (busy) return;
  busy = true;
  // Let requests that arrived meanwhile join the queue before each one runs.
  setImmediate(() => {
    const req = queue.shift();
    if (req) {
      try {
        send({ type: "done", id: req.id, stats: run(req) });
      } catch (e) {
        send({ type: "error", id: req.id, message: e instanceof Error ? e.message : String(e) });
      }
    }
    busy = false;
    if (queue.length) drain();
  });
}

port.on("message", (m: WorkerRequest) => {
  queue.push(m);
  drain();
});
