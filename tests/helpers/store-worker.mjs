// Used by tests and the bench: N increments of one shared counter through the Store, each timed.
import { Store } from "../../dist/store/store.js";
const [dir, n, who] = process.argv.slice(2);
const log = { debug() {}, info() {}, warn: (m) => process.stderr.write(m + "\n"), error: (m) => process.stderr.write(m + "\n") };
const store = new Store(dir, log);
const times = [];
for (let i = 0; i < Number(n); i++) {
  const t0 = performance.now();
  await store.update((s) => {
    const r = s.sessions.counter;
    r.turn_count += 1;
    r.error_log = [...r.error_log.slice(-5), `${who}:${i}`];
  });
  times.push(performance.now() - t0);
}
process.stdout.write(JSON.stringify(times));
