// Preloaded into the server under test (NODE_OPTIONS=--import=…/clock-shift.mjs) by the clock-jump fault
// scenario: the process's wall clock (Date.now, new Date(), Date()) jumps by the number of milliseconds in
// $CS_CLOCK_SHIFT_FILE whenever the process gets SIGUSR2 — what a clock set by NTP, a person, or a VM resumed
// from a snapshot does to a process. The monotonic clock (performance.now, timers) goes on unchanged, as it
// does on a real machine. Without CS_CLOCK_SHIFT_FILE this module does nothing.
import { readFileSync } from "node:fs";

const file = process.env.CS_CLOCK_SHIFT_FILE;
if (file) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  let offset = 0;
  const now = () => realNow() + offset;
  process.on("SIGUSR2", () => {
    try {
      offset = Number(readFileSync(file, "utf8").trim()) || 0;
    } catch {
      offset = 0;
    }
  });
  globalThis.Date = new Proxy(RealDate, {
    construct(target, args, newTarget) {
      return Reflect.construct(target, args.length ? args : [now()], newTarget);
    },
    apply() {
      return new RealDate(now()).toString();
    },
    get(target, prop, receiver) {
      if (prop === "now") return now;
      return Reflect.get(target, prop, receiver);
    },
  });
}
