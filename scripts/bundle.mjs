#!/usr/bin/env node
// After tsc (issue 38, a server that starts at once): bundles the entry dist/bin.js with esbuild into one file plus
// lazy chunks (dist/bin.js, dist/bin-chunk-*.js), so a start reads a few files instead of resolving and compiling
// ~450 modules one by one in node's ESM loader (most of a start's CPU). Every other file of dist/ stays as tsc wrote
// it (tests, the sandbox launcher, the history worker and scripts import them by path). Each module's
// `import.meta.url` is rewritten to the URL of its own file, so what a module finds next to itself (web/, the
// worker, the launcher, package.json, tools-listing.json) is found as before. Without esbuild (a production
// install from git without dev dependencies) the tsc output is kept and works the same, only slower to start.
// CLAUDE_SESSIONS_NO_BUNDLE=1 keeps it too.
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const DIST = resolve(import.meta.dirname, "..", "dist");
if (process.env.CLAUDE_SESSIONS_NO_BUNDLE) process.exit(0);
let esbuild;
try {
  esbuild = await import("esbuild");
} catch {
  console.error("bundle: esbuild not installed; dist/bin.js stays unbundled");
  process.exit(0);
}
for (const n of readdirSync(DIST)) if (/^bin-chunk-.*\.js$/.test(n)) rmSync(join(DIST, n));

/** import.meta.url of a module → the URL of its own file, relative to the bundle's (all outputs sit in dist/). */
const ownUrl = {
  name: "own-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta.url")) return undefined;
      let rel = relative(DIST, args.path).split("\\").join("/");
      if (!rel.startsWith(".")) rel = `./${rel}`;
      return {
        contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(rel)}, import.meta.url).href`),
        loader: "js",
        resolveDir: dirname(args.path),
      };
    });
  },
};

await esbuild.build({
  entryPoints: { bin: join(DIST, "bin.js") },
  outdir: DIST,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  chunkNames: "bin-chunk-[hash]",
  // Loaded by path or with a native part, or finding their own files (the Agent SDK its CLI, the sandbox runtime
  // its seccomp files): kept as they are in node_modules, each still loaded only when first used.
  external: ["node-pty", "@anthropic-ai/claude-agent-sdk", "@anthropic-ai/sandbox-runtime", "@xterm/*", "playwright-core"],
  // CommonJS dependencies bundled into ESM still call require() for node's built-ins, and write-file-atomic salts
  // its temporary names with __filename.
  banner: {
    js: "import { createRequire as __csRequire } from 'node:module'; import { fileURLToPath as __csPath } from 'node:url'; const require = __csRequire(import.meta.url); const __filename = __csPath(import.meta.url);",
  },
  plugins: [ownUrl],
  logLevel: "warning",
  legalComments: "none",
});
