// Takes the state lock through the Store and holds it inside one update, for the lock fault tests.
//   node lock-holder.mjs DIR STALE_MS HOLD_MS
// Prints "locked" each time its update function runs (a retry runs it again), "done" when the update
// has been written; the update adds 1 to the counter record's turn_count.
import { Store } from "../../dist/store/store.js";
const [dir, staleMs, holdMs] = process.argv.slice(2);
const log = {
  debug() {},
  info: (m) => process.stderr.write(m + "\n"),
  warn: (m) => process.stderr.write(m + "\n"),
  error: (m) => process.stderr.write(m + "\n"),
};
const store = new Store(dir, log, { staleMs: Number(staleMs) });
await store.update(async (s) => {
  process.stdout.write("locked\n");
  await new Promise((r) => setTimeout(r, Number(holdMs)));
  s.sessions.counter.turn_count += 1;
});
process.stdout.write("done\n");
