// A process that hammers the store: N increments of the counter record, printing "ack <i>" after each
// one is written (so a runner that kills it knows which updates were acknowledged).
//   node store-writer.mjs DIR N [STALE_MS]
import { Store } from "../../dist/store/store.js";
const [dir, n, staleMs] = process.argv.slice(2);
const quiet = { debug() {}, info() {}, warn() {}, error: (m) => process.stderr.write(m + "\n") };
const store = new Store(dir, quiet, staleMs ? { staleMs: Number(staleMs) } : {});
for (let i = 0; i < Number(n); i++) {
  await store.update((s) => {
    s.sessions.counter.turn_count += 1;
  });
  process.stdout.write(`ack ${i}\n`);
}
