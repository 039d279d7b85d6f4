/** Waiting for a file to change: fs.watch, no polling (a transcript's next line, an output log's growth). */
import { watch } from "node:fs";
import { SessionError } from "../../core/errors.js";

/** Resolves when the file (or a file in the folder) changes or the time is up (fs.watch: no polling). */
export function waitForChange(file: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let w: ReturnType<typeof watch> | undefined;
    const done = (err?: unknown) => {
      clearTimeout(t);
      w?.close();
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onAbort = () => done(new SessionError("CANCELLED", "the request was cancelled"));
    const t = setTimeout(() => done(), timeoutMs);
    try {
      w = watch(file, { persistent: false }, () => done());
    } catch {
      /* the file does not exist yet: wait out the timeout */
    }
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
