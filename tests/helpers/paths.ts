/**
 * Where the tests find this package's parts: the checkout, the built entry, the fixtures and the fake claude. A module
 * of its own so a fast-tier test that needs only a path does not load the harness (the MCP client and its stdio
 * transport); harness.ts re-exports them.
 */
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CLI = join(ROOT, "dist", "bin.js");
export const FIXTURES = join(ROOT, "tests", "fixtures");
export const FAKE_CLAUDE = join(FIXTURES, "bin", "claude");
