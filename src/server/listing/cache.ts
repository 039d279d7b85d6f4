/**
 * The tools/list of the default toolsets, made at build time (scripts/listing-cache.mjs writes
 * dist/server/tools-listing.json): turning the zod schemas into JSON Schema is most of what a server's first
 * tools/list costs (~100 ms of CPU), and its result only changes when the code does. The file names the modules the
 * listing comes from (a hash of every compiled file of api/, core/, store/, server/, server/tools/ with its sub-folders and server/listing/); a server
 * uses it only when they still match, and otherwise lists as before. Running from src/ (tests, tsx) there is no file: the listing is made live.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** dist/server: the listing file's folder, which the sources below are relative to. */
const SERVER = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The compiled folders whose modules define the tools, relative to dist/server. */
const SOURCES = ["../api", "../core", "../store", ".", "./tools", "./tools/core", "./listing"];
export const LISTING_FILE = join(SERVER, "tools-listing.json");

/** A hash of every .js module the listing is made from (names and contents, in a stable order; ~2 ms). */
export function listingFingerprint(dir = SERVER): string {
  const hash = createHash("sha256");
  for (const rel of SOURCES) {
    const d = join(dir, rel);
    let names: string[];
    try {
      names = readdirSync(d)
        .filter((n) => n.endsWith(".js"))
        .sort();
    } catch {
      continue;
    }
    for (const n of names)
      hash
        .update(`${rel}/${n}\0`)
        .update(readFileSync(join(d, n)))
        .update("\0");
  }
  return hash.digest("hex");
}

interface ListingFile {
  fingerprint: string;
  listings: Record<string, unknown[]>;
}

/** The built listing for this toolset key, or undefined (no file, another build, another key). */
export function builtListing<T>(key: string, file = LISTING_FILE): T[] | undefined {
  let data: ListingFile;
  try {
    data = JSON.parse(readFileSync(file, "utf8")) as ListingFile;
  } catch {
    return undefined;
  }
  const list = data.listings?.[key];
  if (!Array.isArray(list) || data.fingerprint !== listingFingerprint(dirname(file))) return undefined;
  return list as T[];
}
