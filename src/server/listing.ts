/**
 * tools/list as a client can afford it (issue 25): every tool's JSON Schema from its zod schemas, made compact.
 * The zod schemas keep every bound and check (the server validates each call and result with them); the listing
 * keeps what a model needs to call a tool right — types, enums, required fields, defaults, number ranges and
 * descriptions — and leaves out what only validation needs (string lengths, array sizes, patterns, formats).
 * A field described once means the same everywhere: a later tool of the same listing with the same field and
 * schema lists it as {} (the tool's description names the tool that describes it). Results list their fields
 * with types and no descriptions. No $ref: each tool's schema stands alone, as clients read them one by one.
 */
import { z } from "zod";
import type { Tool } from "./tool.js";

type Json = Record<string, unknown>;

/** Keys that only validation needs; the server still checks them (zod), and its error names the bound. */
const VALIDATION_ONLY = new Set(["$schema", "minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "propertyNames"]);

/** zod's bounds of an int: they say nothing a type "integer" does not. */
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * `depth` counts object levels: the arguments or the result are 1, their fields 2, and so on (through properties,
 * record values and array items). A result lists its fields with their types; objects in it are listed as objects
 * (their shapes are in the README). Arguments keep their shapes to level 3 (an option object's fields); deeper
 * objects, such as the server definitions of mcp_servers, are described by their field's description.
 * Results carry no descriptions: the model calling a tool reads the arguments' ones.
 */
function compact(node: unknown, isOutput: boolean, depth = 1): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, isOutput, depth));
  if (typeof node !== "object" || node === null) return node;
  const src = node as Json;
  if (src.properties && depth > (isOutput ? 1 : 2)) return { type: "object" };
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (VALIDATION_ONLY.has(k)) continue;
    if ((k === "minimum" && v === -SAFE) || (k === "maximum" && v === SAFE)) continue;
    if (isOutput && k === "description") continue;
    // A result is the server's: a client must not reject one because a newer server added a field.
    if (isOutput && k === "additionalProperties" && v === false) continue;
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
    return { ...rest, ...(anyOf[0] as Json) };
  }
  return out;
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

type Seen = Map<string, { json: string; description?: string; tool: string }[]>;

/**
 * A top-level field an earlier tool of the listing already showed: with the same schema an argument is listed as
 * {} (its schema and description are that tool's) and a result field is left out (results are not closed
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
      else props[name] = {};
      from.add(same.tool);
      continue;
    }
    if (d && before.some((b) => b.description === d)) delete p.description;
    seen.set(name, [...before, { json, ...(d ? { description: d } : {}), tool }]);
  }
  return from;
}

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object" } & Json;
  outputSchema: { type: "object" } & Json;
  annotations: Json;
}

/** The tools as tools/list shows them, in the given order. */
export function listingOf(tools: readonly Tool[]): ListedTool[] {
  const seenIn: Seen = new Map();
  const seenOut: Seen = new Map();
  return tools.map((t) => {
    const inputSchema = compact(z.toJSONSchema(t.input, { io: "input" }), false) as ListedTool["inputSchema"];
    const outputSchema = compact(z.toJSONSchema(t.output, { io: "output" }), true) as ListedTool["outputSchema"];
    const from = [...dedupe(inputSchema, seenIn, t.name, false)];
    const outFrom = [...dedupe(outputSchema, seenOut, t.name, true)];
    const notes = [...(from.length ? [`Arguments shown as {}: as in ${from.join(", ")}.`] : []), ...(outFrom.length ? [`Result fields not listed here: as in ${outFrom.join(", ")}.`] : [])];
    return { name: t.name, title: t.title, description: [t.description, ...notes].join(" "), inputSchema, outputSchema, annotations: { ...t.annotations } };
  });
}
