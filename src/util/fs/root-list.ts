import { realpathSync } from "node:fs";
import { isAbsolute } from "node:path";
import { isWithin } from "./paths.js";

/**
 * An operator's list of directories (`/a:/b` or `/a,/b`): absolute directories that exist, as their real paths.
 * A bad entry throws (the server does not start with a list it cannot honour). Empty or unset: [].
 */
export function parseRootList(name: string, raw: string | undefined): string[] {
  if (!raw) return [];
  const out: string[] = [];
  for (const part of raw
    .split(/[:,]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!isAbsolute(part)) throw new Error(`${name}: ${JSON.stringify(part)} is not an absolute path.`);
    try {
      out.push(realpathSync(part));
    } catch {
      throw new Error(`${name}: ${JSON.stringify(part)} does not exist (create it, or leave it out of the list).`);
    }
  }
  return [...new Set(out)];
}

/** `p` (a real path) lies in one of `roots` (real paths). */
export function withinAny(roots: readonly string[], p: string): boolean {
  return roots.some((r) => isWithin(p, r));
}
