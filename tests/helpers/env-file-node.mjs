/**
 * A "node" on this machine whose environment comes from a file (mode 0600) instead of its command line, so a test
 * node's secrets (the mock API's key) are never in an argv: `node env-file-node.mjs <file>` replaces its environment
 * with the file's and runs the built server in this process.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const file = process.argv[2];
if (!file) throw new Error("usage: env-file-node.mjs <env.json>");
const env = JSON.parse(readFileSync(file, "utf8"));
for (const k of Object.keys(process.env)) delete process.env[k];
Object.assign(process.env, env);
process.argv.splice(1, 2, join(import.meta.dirname, "..", "..", "dist", "bin.js"));
await import(join(import.meta.dirname, "..", "..", "dist", "bin.js"));
