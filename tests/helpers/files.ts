/** Files a test searches (for a secret, say) while the server goes on writing beside it. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Every regular file under `dir` (below `maxBytes`) with its text (latin1), for a search for a secret. The server goes on meanwhile: a
 * folder or file gone between the listing and the read (a lock's folder, a temporary file) is skipped, not an error.
 */
export function filesWithText(dir: string, maxBytes = 64 * 1024 * 1024): Array<readonly [string, string]> {
  const gone = (err: unknown) => (err as NodeJS.ErrnoException).code === "ENOENT";
  const walk = (d: string): string[] => {
    try {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : e.isFile() ? [join(d, e.name)] : [],
      );
    } catch (err) {
      if (gone(err)) return [];
      throw err;
    }
  };
  return walk(dir).flatMap((f) => {
    try {
      return statSync(f).size < maxBytes ? [[f, readFileSync(f, "latin1")] as const] : [];
    } catch (err) {
      if (gone(err)) return [];
      throw err;
    }
  });
}
