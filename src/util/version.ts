import { readFileSync } from "node:fs";

/** This package's version (its package.json, found from this module's own file: dist/util/ → the package root). */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}
