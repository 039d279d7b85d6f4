/**
 * The package a node is given by `claude-sessions nodes add`: this exact installation of claude-sessions — its
 * published files (package.json's "files") and the production dependencies it runs with, found the way node finds
 * them (node_modules upwards from each package) — as one .tgz whose only top directory is `package/`, like `npm pack`.
 * The dependencies are in it because a node may have no registry to install them from: the node only unpacks it.
 * Left out: the Agent SDK's per-platform claude binaries (@anthropic-ai/claude-agent-sdk-<platform>, ~360 MB; the
 * headless runner runs the node's own claude, CLAUDE_PATH). Native parts (node-pty) are this machine's build, so the
 * node must be the same platform (`nodes add` checks `uname -sm`).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Dependencies never shipped to a node (see above). */
const LEFT_OUT = /^@anthropic-ai\/claude-agent-sdk-/;

/** The root of this installation of claude-sessions (dist/nodes/provision/ → three levels up). */
export function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
}

interface PkgJson {
  name?: string;
  version?: string;
  files?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function readPkg(dir: string): PkgJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PkgJson;
}

/** Where node would find package `name` from `dir` (node_modules upwards), or undefined. */
function findDep(dir: string, name: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const p = join(d, "node_modules", name);
    if (existsSync(join(p, "package.json"))) return p;
    if (dirname(d) === d) return undefined;
  }
}

/**
 * Every production dependency of the package at `root`, transitively, as [directory, where it goes under package/].
 * A package found inside another one's directory travels with it. A missing optional dependency is skipped; a
 * missing required one is an error.
 */
export function productionDeps(root: string): Array<[string, string]> {
  const seen = new Map<string, string>();
  const visit = (dir: string, isRoot: boolean): void => {
    const pkg = readPkg(dir);
    const deps: Array<[string, boolean]> = [
      ...Object.keys(pkg.dependencies ?? {}).map((n): [string, boolean] => [n, false]),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((n): [string, boolean] => [n, true]),
    ];
    for (const [name, optional] of deps) {
      if (LEFT_OUT.test(name)) continue;
      const at = findDep(dir, name);
      if (!at) {
        if (optional) continue;
        throw new Error(
          `the package cannot be packed: its dependency ${name} (of ${isRoot ? "claude-sessions" : readPkg(dir).name}) is not installed`,
        );
      }
      const real = resolve(at);
      if (seen.has(real)) continue;
      // Where it goes: its path under the root's node_modules, or (hoisted above the root) node_modules/<name>.
      const rel = real.startsWith(root + sep) ? relative(root, real) : join("node_modules", name);
      seen.set(real, rel);
      visit(real, false);
    }
  };
  visit(root, true);
  // A package inside another's directory is copied with it.
  const all = [...seen.entries()].sort((a, b) => a[0].length - b[0].length);
  return all.filter(([dir]) => !all.some(([other]) => other !== dir && dir.startsWith(other + sep)));
}

export interface Packed {
  path: string;
  sha256: string;
  version: string;
  bytes: number;
  /** Removes the temporary directory the tarball is in. */
  dispose(): void;
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** Packs the installation at `root` (default: this one) with its production dependencies into a temporary .tgz. */
export async function packSelf(root = packageRoot()): Promise<Packed> {
  const pkg = readPkg(root);
  if (pkg.name !== "claude-sessions" || !pkg.version) throw new Error(`${root} is not a claude-sessions package`);
  const tmp = mkdtempSync(join(tmpdir(), "cs-pack-"));
  const dispose = () => rmSync(tmp, { recursive: true, force: true });
  try {
    const stage = join(tmp, "package");
    cpSync(join(root, "package.json"), join(stage, "package.json"));
    for (const f of pkg.files ?? []) {
      const src = join(root, f);
      if (existsSync(src)) cpSync(src, join(stage, f), { recursive: true, verbatimSymlinks: true });
    }
    for (const [dir, rel] of productionDeps(root)) cpSync(dir, join(stage, rel), { recursive: true, verbatimSymlinks: true });
    const path = join(tmp, `claude-sessions-${pkg.version}.tgz`);
    const r = spawnSync("tar", ["-czf", path, "-C", tmp, "--owner=0", "--group=0", "--numeric-owner", "package"], {
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`tar could not pack the package: ${(r.stderr || r.error?.message || "").slice(0, 500)}`);
    rmSync(stage, { recursive: true, force: true });
    return { path, sha256: await sha256File(path), version: pkg.version, bytes: statSync(path).size, dispose };
  } catch (e) {
    dispose();
    throw e;
  }
}
