/**
 * tools/list as a client can afford it (issue 25): every tool's JSON Schema from its zod schemas, made compact.
 * The zod schemas keep every bound and check (the server validates each call and result with them); the listing
 * keeps what a model needs to call a tool right — types, enums, required fields, non-false defaults and
 * descriptions — and leaves out what only validation needs (string lengths, array sizes, number bounds, patterns,
 * formats, additionalProperties: false or {}, an enum's type "string", and the values' {type: "object"} of an object
 * argument whose description gives their shape). A field described once means the same everywhere: a later tool of the same
 * listing with the same field and schema lists it with its type only (its description says "See <that tool>.").
 * No property is {}: a schema with no keyword accepts any value (the Inspector's --strict check, npm run check:tools).
 * Results list their required fields and a few key ones (listed-results.ts) with types only; the tool's
 * description says the full result is in the text copy and the README. No $ref: each tool's schema stands alone,
 * as clients read them one by one.
 */
import { z } from "zod";
import { KEY_RESULT_FIELDS, TAKES_ARGUMENTS_OF, UNLISTED_ARGUMENTS } from "./listed-results.js";
import type { Tool } from "../tool.js";

type Json = Record<string, unknown>;

/** Keys that only validation needs; the server still checks them (zod), and its error names the bound. */
const VALIDATION_ONLY = new Set([
  "$schema",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "pattern",
  "format",
  "propertyNames",
]);

/** zod's bounds of an int: they say nothing a type "integer" does not. */
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * `depth` counts object levels: the arguments or the result are 1, their fields 2, and so on (through properties,
 * record values and array items). A result lists its fields with their types; objects in it are listed as objects
 * (their shapes are in the README). An argument that is an object (doppler, worktree's options, mcp_servers) is
 * listed as an object and its description gives its shape.
 * Results carry no descriptions: the model calling a tool reads the arguments' ones.
 */
function compact(node: unknown, isOutput: boolean, depth = 1): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, isOutput, depth));
  if (typeof node !== "object" || node === null) return node;
  const src = node as Json;
  if (src.properties && depth > 1)
    return { type: "object", ...(!isOutput && typeof src.description === "string" ? { description: src.description } : {}) };
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (VALIDATION_ONLY.has(k)) continue;
    if ((k === "minimum" && v === -SAFE) || (k === "maximum" && v === SAFE)) continue;
    // Number bounds are the server's limits, not choices a model makes; the server's error names the bound.
    if (!isOutput && (k === "maximum" || k === "minimum" || k === "exclusiveMinimum")) continue;
    // An absent boolean is read as false; saying its default is false tells a model nothing.
    if (k === "default" && v === false && src.type === "boolean") continue;
    // A result's values are read, not chosen: its fields list their types, not their descriptions or enums.
    if (isOutput && (k === "description" || k === "enum" || k === "const")) continue;
    // A result is the server's: a client must not reject one because a newer server added a field.
    if (isOutput && k === "additionalProperties" && v === false) continue;
    // An enum of strings says the type already.
    if (!isOutput && k === "type" && v === "string" && Array.isArray(src.enum) && src.enum.every((e) => typeof e === "string"))
      continue;
    // Any value is what JSON Schema assumes already; a described object argument's description gives its values' shape.
    if (
      !isOutput &&
      k === "additionalProperties" &&
      isAnyOrObject(v) &&
      (Object.keys(v as Json).length === 0 || (depth > 1 && typeof src.description === "string"))
    )
      continue;
    if (k === "properties" && typeof v === "object" && v !== null) {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, compact(s, isOutput, depth + 1)]));
    } else if ((k === "items" || k === "additionalProperties") && typeof v === "object" && v !== null) {
      out[k] = compact(v, isOutput, depth + 1);
    } else if (k === "anyOf" && Array.isArray(v)) {
      out[k] = dedupeAlternatives(v.map((n) => compact(n, isOutput, depth)));
    } else out[k] = compact(v, isOutput, depth);
  }
  // anyOf with one alternative left (all reduced to the same shape) is that alternative.
  if (Array.isArray(out.anyOf) && out.anyOf.length === 1) {
    const { anyOf, ...rest } = out;
    return splitTypeArray({ ...rest, ...(anyOf[0] as Json) });
  }
  return splitTypeArray(out);
}

/** `{}` or `{type: "object"}` with nothing else. */
function isAnyOrObject(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 0 || (keys.length === 1 && (v as Json).type === "object");
}

/** Alternatives that became the same once compacted are listed once. */
function dedupeAlternatives(list: unknown[]): unknown[] {
  const seen = new Set<string>();
  return list.filter((x) => {
    if (typeof x !== "object" || x === null) return true;
    const key = JSON.stringify(x);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A schema cut to its type (a field an earlier tool describes): `{type}`, an enum's or const's value type, or the
 * alternatives' types; a schema with none of these is kept whole. Never `{}`: a schema with no keyword accepts any
 * value (the MCP Inspector's --strict check).
 */
export function typeOf(s: Json): Json {
  if (typeof s.type === "string") return { type: s.type };
  const values = Array.isArray(s.enum) ? s.enum : "const" in s ? [s.const] : undefined;
  if (values) {
    const types = [...new Set(values.map((v) => (v === null ? "null" : Number.isInteger(v) ? "integer" : typeof v)))];
    return types.length === 1 ? { type: types[0] } : { anyOf: types.map((type) => ({ type })) };
  }
  if (Array.isArray(s.anyOf)) {
    const alts = dedupeAlternatives((s.anyOf as Json[]).map(typeOf));
    return alts.length === 1 ? (alts[0] as Json) : { anyOf: alts };
  }
  // Nothing to cut it to: listed whole rather than as a type it may not have.
  return s;
}

/** `type: [a, b]` as anyOf branches of one type each: clients that map schemas onto a single-type dialect reject the array. */
function splitTypeArray(node: Json): Json {
  if (!Array.isArray(node.type)) return node;
  const { type, ...rest } = node;
  return { ...rest, anyOf: (type as string[]).map((t) => ({ type: t })) };
}

type Seen = Map<string, { json: string; description?: string; tool: string }[]>;

/**
 * A top-level field an earlier tool of the listing already showed: with the same schema an argument is listed with
 * its type only (its schema and description are that tool's) and a result field is left out (results are not closed
 * objects); with the same description only its description is dropped. Returns the tools whose fields were shortened so, for the tool's description.
 */
function dedupe(schema: Json, seen: Seen, tool: string, isOutput: boolean): Set<string> {
  const from = new Set<string>();
  const props = schema.properties as Record<string, Json> | undefined;
  if (!props) return from;
  for (const [name, p] of Object.entries(props)) {
    const json = JSON.stringify(p);
    const d = typeof p.description === "string" ? p.description : undefined;
    const before = seen.get(name) ?? [];
    const same = before.find((b) => b.json === json);
    if (same) {
      if (isOutput) delete props[name];
      else props[name] = typeOf(p);
      from.add(same.tool);
      continue;
    }
    if (d && before.some((b) => b.description === d)) delete p.description;
    seen.set(name, [...before, { json, ...(d ? { description: d } : {}), tool }]);
  }
  return from;
}

/** Names the earlier tools that describe the arguments this one lists with their type only. */
export const SEE = "See";

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object" } & Json;
  outputSchema: { type: "object" } & Json;
  annotations: Json;
}

/**
 * A result lists its required fields and the tool's key fields (listed-results.ts); returns whether any were left out.
 */
function keepKeyFields(schema: Json, tool: string): boolean {
  const props = schema.properties as Json | undefined;
  if (!props) return false;
  const keep = new Set([...((schema.required as string[] | undefined) ?? []), ...(KEY_RESULT_FIELDS[tool] ?? [])]);
  const names = Object.keys(props);
  for (const n of names) if (!keep.has(n)) delete props[n];
  return Object.keys(props).length < names.length;
}

/**
 * Hints equal to their default in both the MCP spec and the clients are left out: readOnlyHint false and
 * idempotentHint false. destructiveHint and openWorldHint stay, even at the spec's default (true): Claude Code reads
 * an absent one as false (its MCP tool's isDestructive/isOpenWorld use `?? false`), so leaving them out would change
 * what it is told. A read-only tool lists neither destructiveHint nor idempotentHint: the spec gives them meaning
 * only when readOnlyHint is false, and Claude Code treats a read-only tool as safe to repeat.
 */
function hints(a: Tool["annotations"]): Json {
  const out: Json = { ...a };
  if (out.readOnlyHint === false) delete out.readOnlyHint;
  if (out.idempotentHint === false) delete out.idempotentHint;
  // Meaningful only when readOnlyHint is false (the spec); Claude Code reads them only then too.
  if (out.readOnlyHint === true) {
    delete out.destructiveHint;
    delete out.idempotentHint;
  }
  return out;
}

/**
 * A tool that takes every argument of an earlier tool of the listing (TAKES_ARGUMENTS_OF: run_task takes
 * start_session's) lists only the ones it adds or changes and names that tool; returns it, or undefined when that
 * tool is not listed before it or an argument of it is missing here.
 */
function extension(
  schema: Json,
  tool: string,
  argsOf: Map<string, Map<string, string>>,
  raw: Map<string, string>,
): string | undefined {
  const base = TAKES_ARGUMENTS_OF[tool];
  const args = base ? argsOf.get(base) : undefined;
  const props = schema.properties as Json | undefined;
  if (!base || !args || !props || ![...args.keys()].every((n) => raw.has(n))) return undefined;
  for (const [name, json] of args) if (raw.get(name) === json) delete props[name];
  return base;
}

/**
 * The tools as tools/list shows them, in the given order. Arguments are listed open (no additionalProperties:
 * false): the server refuses an unknown one with a typed error all the same.
 */
export function listingOf(tools: readonly Tool[]): ListedTool[] {
  const seenIn: Seen = new Map();
  const seenOut: Seen = new Map();
  const argsOf = new Map<string, Map<string, string>>();
  return tools.map((t) => {
    const inputSchema = compact(z.toJSONSchema(t.input, { io: "input" }), false) as ListedTool["inputSchema"];
    delete inputSchema.additionalProperties;
    const props = (inputSchema.properties ?? {}) as Json;
    for (const a of UNLISTED_ARGUMENTS) delete props[a];
    // An argument's schema and whether it is required: the same in both means inherited.
    const required = new Set((inputSchema.required as string[] | undefined) ?? []);
    const raw = new Map(Object.entries(props).map(([n, v]) => [n, JSON.stringify(v) + (required.has(n) ? "!" : "")]));
    const base = extension(inputSchema, t.name, argsOf, raw);
    argsOf.set(t.name, raw);
    const outputSchema = compact(z.toJSONSchema(t.output, { io: "output" }), true) as ListedTool["outputSchema"];
    keepKeyFields(outputSchema, t.name);
    // A tool that takes every argument of another names it once.
    const from = [...dedupe(inputSchema, seenIn, t.name, false)].filter((f) => f !== base);
    dedupe(outputSchema, seenOut, t.name, true);
    // That a result has more fields than listed, and where a type-only argument is described, the instructions say once.
    const notes = [...(base ? [`Also every argument of ${base}.`] : []), ...(from.length ? [`${SEE} ${from.join(", ")}.`] : [])];
    return {
      name: t.name,
      title: t.title,
      description: [t.description, ...notes].join(" "),
      inputSchema,
      outputSchema,
      annotations: hints(t.annotations),
    };
  });
}
