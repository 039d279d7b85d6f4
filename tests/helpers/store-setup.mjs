/**
 * The store's set-up, shared by its component tests, the fault scenarios (scripts/faults/store-scenarios.mjs) and
 * the bench's store phase: a session record as a fresh session has it, a temporary state directory, loggers, and
 * the `counter` record that concurrent writers (store-worker.mjs, scripts/faults/store-writer.mjs) increment. Plain
 * ESM so the scripts use it too; the Store itself is the caller's (the tests take src/, the scripts dist/).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A session record of the stored shape, idle, with nothing counted yet; `over` replaces fields. */
export function storeRecord(id, over = {}) {
  return {
    session_id: id,
    claude_session_id: "00000000-0000-0000-0000-000000000000",
    backend: "tmux",
    status: "idle",
    created_at: new Date().toISOString(),
    cwd: "/tmp",
    command: "claude",
    args: [],
    env_names: [],
    turn_count: 0,
    error_log: [],
    messages_sent: 0,
    responses_received: 0,
    total_chars_sent: 0,
    total_chars_received: 0,
    options: {},
    ...over,
  };
}

/** A new temporary folder (`root`, the caller removes it) and the state directory to give a Store inside it. */
export function tempStateDir(label) {
  const root = mkdtempSync(join(tmpdir(), `cs-${label}-`));
  return { root, dir: join(root, "state") };
}

export const quietLog = { debug() {}, info() {}, warn() {}, error() {} };

/** A logger that keeps the store's warnings and errors (a test reads them). */
export function warningLog() {
  const warnings = [];
  const keep = (m) => void warnings.push(m);
  return { warnings, log: { debug() {}, info() {}, warn: keep, error: keep } };
}

/** Writes the `counter` record the concurrent writers increment (its turn_count). */
export async function seedCounter(store) {
  await store.update((st) => void (st.sessions.counter = storeRecord("counter")));
}
