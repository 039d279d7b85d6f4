/**
 * Every tool's name → its input and output schema, derived from the server's own declarations (src/server/tools),
 * so the test client is typed per tool: `callOk("start_session", {cwd})` checks the arguments and types the result
 * at compile time (`npm run typecheck` covers tests). A new tool is typed here with no edit.
 */
import type { z } from "zod";
import { TOOL_LIST } from "../../src/server/tools/index.js";

type Declared = (typeof TOOL_LIST)[number];
type ByName<N> = Extract<Declared, { name: N }>;

export const TOOLS = Object.fromEntries(TOOL_LIST.map((t) => [t.name, [t.input, t.output] as const])) as unknown as {
  readonly [N in Declared["name"]]: readonly [ByName<N>["input"], ByName<N>["output"]];
};

export type ToolName = keyof typeof TOOLS;
/** What a caller may send (the schema's input side: defaults optional). */
export type ToolArgs<N extends ToolName> = z.input<(typeof TOOLS)[N][0]>;
type AllKeys<U> = U extends unknown ? keyof U : never;
/** A union of object types read as one: every member's fields, those not in every member possibly undefined. */
type Flatten<U> = { [K in AllKeys<U>]: U extends unknown ? (K extends keyof U ? U[K] : undefined) : never };
type Output<N extends ToolName> = z.output<(typeof TOOLS)[N][1]>;
/**
 * What a successful call returns (structuredContent, the output schema's parsed side). list_sessions' rows are a
 * summary or, with include_metadata, the record: read as one type so a test can look at a row's fields.
 */
export type ToolData<N extends ToolName> = N extends "list_sessions"
  ? Omit<Output<N>, "sessions"> & { sessions: Array<Flatten<Output<"list_sessions">["sessions"][number]>> }
  : Output<N>;
