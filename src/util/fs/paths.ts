import { sep } from "node:path";

/** `p` is `dir` or lies under it (both absolute and resolved; `/` contains everything). */
export function isWithin(p: string, dir: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}
