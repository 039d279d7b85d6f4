/**
 * Runs the indexer off the caller's path. In a worker thread (the built package) the event loop never
 * waits for it; inline (running from TypeScript sources, as the unit tests do) it works in batches of
 * ~150 ms and yields to the event loop between them. Either way requests are done one after another.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { Indexer, type SyncStats } from "./indexer.js";

export interface RunnerEvents {
  /** The database file was deleted and started afresh (corrupt, missing, or another schema). */
  onReset(): void;
  /** A batch was committed. */
  onProgress(stats: SyncStats): void;
}

export interface IndexRunner {
  sync(paths?: string[]): Promise<SyncStats>;
  /** Deletes the index and builds it again from every transcript. */
  rebuild(): Promise<SyncStats>;
  close(): Promise<void>;
}

export type WorkerRequest = { id: number; op: "sync"; paths?: string[] } | { id: number; op: "rebuild" };
export type WorkerReply =
  | { type: "done"; id: number; stats: SyncStats }
  | { type: "error"; id: number; message: string }
  | { type: "progress"; stats: SyncStats }
  | { type: "reset" };

export function workerScript(): string | undefined {
  const path = fileURLToPath(new URL("./worker.js", import.meta.url));
  return existsSync(path) ? path : undefined;
}

/** Inline batches stay short: they hold the caller's event loop. */
const INLINE_BATCH_MS = 50;

export class InlineRunner implements IndexRunner {
  private indexer: Indexer | undefined;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly dbPath: string,
    private readonly configDir: string,
    private readonly events: RunnerEvents,
  ) {}

  private run(fn: (ix: Indexer) => Generator<SyncStats, SyncStats>): Promise<SyncStats> {
    const next = this.chain.then(async () => {
      this.indexer ??= new Indexer(this.dbPath, this.configDir, () => this.events.onReset(), INLINE_BATCH_MS);
      const gen = fn(this.indexer);
      for (;;) {
        const step = gen.next();
        if (step.done) return step.value;
        this.events.onProgress(step.value);
        await new Promise((r) => setImmediate(r));
      }
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  sync(paths?: string[]): Promise<SyncStats> {
    return this.run((ix) => ix.sync(paths));
  }

  rebuild(): Promise<SyncStats> {
    return this.run((ix) => {
      ix.reset();
      return ix.sync();
    });
  }

  async close(): Promise<void> {
    await this.chain;
    this.indexer?.close();
    this.indexer = undefined;
  }
}

const WORKER_YOUNG_MB = 8;

export class WorkerRunner implements IndexRunner {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve(s: SyncStats): void; reject(e: Error): void }>();
  private failed: Error | undefined;

  /** The thread stopped (crashed, or was ended): it answers nothing more. */
  get broken(): boolean {
    return this.failed !== undefined;
  }

  constructor(script: string, dbPath: string, configDir: string, events: RunnerEvents) {
    // A small young generation: the batches' short-lived strings are collected sooner (a lower peak RSS).
    this.worker = new Worker(script, {
      workerData: { dbPath, configDir },
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
    });
    this.worker.unref();
    this.worker.on("message", (m: WorkerReply) => {
      if (m.type === "progress") events.onProgress(m.stats);
      else if (m.type === "reset") events.onReset();
      else {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        if (m.type === "done") w?.resolve(m.stats);
        else w?.reject(new Error(m.message));
      }
    });
    const fail = (e: Error) => {
      this.failed = e;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`the history indexer stopped (exit ${code})`)));
  }

  private ask(req: { op: "sync"; paths?: string[] } | { op: "rebuild" }): Promise<SyncStats> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id });
    });
  }

  sync(paths?: string[]): Promise<SyncStats> {
    return this.ask(paths ? { op: "sync", paths } : { op: "sync" });
  }

  rebuild(): Promise<SyncStats> {
    return this.ask({ op: "rebuild" });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** How long an idle indexer thread is kept before it is ended (a server between turns holds no thread). */
const WORKER_IDLE_MS = 15_000;

/**
 * A WorkerRunner that exists only while there is work: started on the first request, ended after a quiet
 * spell, and started afresh after a failure (a thread that died does not disable the history for good).
 */
export class OnDemandWorkerRunner implements IndexRunner {
  private runner: WorkerRunner | undefined;
  private pending = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly script: string,
    private readonly dbPath: string,
    private readonly configDir: string,
    private readonly events: RunnerEvents,
    private readonly idleMs = WORKER_IDLE_MS,
  ) {}

  private async run(fn: (r: WorkerRunner) => Promise<SyncStats>): Promise<SyncStats> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const r = (this.runner ??= new WorkerRunner(this.script, this.dbPath, this.configDir, this.events));
    this.pending++;
    try {
      return await fn(r);
    } catch (e) {
      if (this.runner === r && r.broken) this.runner = undefined;
      throw e;
    } finally {
      this.pending--;
      if (this.pending === 0 && this.runner) {
        this.idle = setTimeout(() => void this.stop(), this.idleMs);
        this.idle.unref();
      }
    }
  }

  /** Whether a thread exists now. */
  get running(): boolean {
    return this.runner !== undefined;
  }

  private async stop(): Promise<void> {
    if (this.pending > 0) return;
    const r = this.runner;
    this.runner = undefined;
    await r?.close();
  }

  sync(paths?: string[]): Promise<SyncStats> {
    return this.run((r) => r.sync(paths));
  }

  rebuild(): Promise<SyncStats> {
    return this.run((r) => r.rebuild());
  }

  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const r = this.runner;
    this.runner = undefined;
    await r?.close();
  }
}
