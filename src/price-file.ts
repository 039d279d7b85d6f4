/**
 * The operator's price file: CLAUDE_SESSIONS_PRICES names a JSON file of model prices (USD per million tokens)
 * for models the built-in table (src/pricing.ts) does not know, or to override it. Read once per process (a
 * history worker reads it too), validated strictly: a bad file is an error naming the file and the entry, never
 * a silently ignored price. Format:
 *
 *   { "claude-opus-9":  { "input": 5, "output": 25, "cache_write": 6.25, "cache_read": 0.5, "cache_write_1h": 10 },
 *     "my-proxy-model-*": { "input": 1, "output": 2, "cache_write": 1.25, "cache_read": 0.1 } }
 *
 * A key is a model id (matched like the table: lower case, without its date suffix or [1m]) or, ending in "*",
 * a prefix (the longest matching prefix wins). cache_write is the 5-minute cache write; cache_write_1h defaults to
 * it when left out.
 *
 * Like nodes.json, the file must be the operator's: a regular file owned by this server's user (or root) and not
 * writable by group or others — prices decide what budgets allow. At most 1 MiB.
 */
import { readRegularSync } from "./util/fs/files.js";
import { z } from "zod";

export interface ModelPrice {
  input: number;
  cache_write_5m: number;
  cache_write_1h: number;
  cache_read: number;
  output: number;
}

const rate = z.number().finite().min(0).max(1_000_000);
const entry = z.strictObject({ input: rate, output: rate, cache_write: rate, cache_read: rate, cache_write_1h: rate.optional() });
const key = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[a-z0-9][a-z0-9._:@/-]*\*?$/, "a key is a lower-case model id, or a prefix ending in *");
const fileSchema = z.record(key, entry);

export const PRICES_ENV = "CLAUDE_SESSIONS_PRICES";

interface Loaded {
  path: string;
  exact: Map<string, ModelPrice>;
  prefixes: [string, ModelPrice][];
}

let loaded: Loaded | null | undefined;

const MAX_BYTES = 1024 * 1024;

/** Reads and validates a price file; throws an Error naming the file and what is wrong. */
export function readPriceFile(path: string): Loaded {
  let read;
  try {
    read = readRegularSync(path, MAX_BYTES);
  } catch (e) {
    throw new Error(`${PRICES_ENV}=${path}: not a readable JSON file (${e instanceof Error ? e.message : String(e)})`);
  }
  const { st } = read;
  const me = process.getuid?.();
  if ((me !== undefined && st.uid !== me && st.uid !== 0) || st.mode & 0o022) {
    throw new Error(
      `${PRICES_ENV}=${path} cannot be trusted: it must belong to this server's user and not be writable by group or ` +
        `others (mode ${(st.mode & 0o777).toString(8)}, uid ${st.uid}). Fix: chmod 600 ${JSON.stringify(path)}`,
    );
  }
  if (read.truncated) throw new Error(`${PRICES_ENV}=${path}: over ${MAX_BYTES} bytes; a price file is a few entries`);
  let raw: unknown;
  try {
    raw = JSON.parse(read.data.toString("utf8"));
  } catch (e) {
    throw new Error(`${PRICES_ENV}=${path}: not a readable JSON file (${e instanceof Error ? e.message : String(e)})`);
  }
  const r = fileSchema.safeParse(raw);
  if (!r.success) {
    // A bad key's own reason is one level down (zod reports "Invalid key in record" above it).
    const why = r.error.issues
      .map(
        (i) =>
          `${i.path.length ? i.path.join(".") : "(file)"}: ${i.code === "invalid_key" ? i.issues.map((x) => x.message).join(", ") : i.message}`,
      )
      .join("; ");
    throw new Error(
      `${PRICES_ENV}=${path}: ${why} (each entry: {"input", "output", "cache_write", "cache_read"[, "cache_write_1h"]}, USD per million tokens)`,
    );
  }
  const exact = new Map<string, ModelPrice>();
  const prefixes: [string, ModelPrice][] = [];
  for (const [k, v] of Object.entries(r.data)) {
    const price = {
      input: v.input,
      output: v.output,
      cache_write_5m: v.cache_write,
      cache_write_1h: v.cache_write_1h ?? v.cache_write,
      cache_read: v.cache_read,
    };
    if (k.endsWith("*")) prefixes.push([k.slice(0, -1), price]);
    else exact.set(k, price);
  }
  prefixes.sort((a, b) => b[0].length - a[0].length);
  return { path, exact, prefixes };
}

/** Reads the file CLAUDE_SESSIONS_PRICES names (Config.pricesFile; null when unset), once. Throws when it is bad. */
export function operatorPrices(path?: string): Loaded | null {
  if (loaded !== undefined) return loaded;
  loaded = path ? readPriceFile(path) : null;
  return loaded;
}

/** The operator's price for a model (its table key and its id as given), if the file has one. */
export function operatorPrice(canonical: string, model: string): ModelPrice | undefined {
  // Read at start by createApp (operatorPrices), which refuses to run with a bad file; a process that never read it
  // prices nothing from it.
  const ops = loaded ?? null;
  if (!ops) return undefined;
  const raw = model.trim().toLowerCase();
  const hit = ops.exact.get(canonical) ?? ops.exact.get(raw);
  if (hit) return hit;
  for (const [prefix, price] of ops.prefixes) if (canonical.startsWith(prefix) || raw.startsWith(prefix)) return price;
  return undefined;
}
