/**
 * Claude Code CLIs by version, for the drift check (scripts/test-cli.mjs) and the exact-delivery stress
 * (scripts/exact-delivery.mjs): `${XDG_CACHE_HOME:-$HOME/.cache}/claude-sessions/cli/<version>`, installed there with
 * `npm install --prefix` when missing and reused when present. The pinned devDependency is used for its own version.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..");
export const PINNED = join(ROOT, "node_modules", ".bin", "claude");

export function cacheRoot() {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "claude-sessions", "cli");
}

/** `claude --version` of a binary ("2.1.330"), or undefined when it does not run. */
export function versionOf(bin) {
  if (!existsSync(bin)) return undefined;
  const r = spawnSync(bin, ["--version"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/" },
  });
  return r.status === 0 ? /^(\d+\.\d+\.\d+)/.exec(r.stdout ?? "")?.[1] : undefined;
}

/** The newest version on the registry (`latest` tag), through npm itself. */
export function latestVersion() {
  const r = spawnSync("npm", ["view", "@anthropic-ai/claude-code@latest", "version"], { encoding: "utf8", timeout: 120_000 });
  const v = /(\d+\.\d+\.\d+)/.exec(r.stdout ?? "")?.[1];
  if (r.status !== 0 || !v)
    throw new Error(`npm view @anthropic-ai/claude-code@latest failed: ${(r.stderr ?? "").trim().split("\n").at(-1)}`);
  return v;
}

/**
 * The binary of `version` ("2.1.197", or "latest"): the pinned one, a cached one, or a new install into the cache.
 * Resolves to {version, path, installed} (installed: it was installed now). Throws when the install fails.
 */
export function cliFor(version, log = (m) => process.stderr.write(`${m}\n`)) {
  const v = version === "latest" ? latestVersion() : version;
  if (!/^\d+\.\d+\.\d+$/.test(v)) throw new Error(`not a version: ${JSON.stringify(version)} (use x.y.z or latest)`);
  if (versionOf(PINNED) === v) return { version: v, path: PINNED, installed: false };
  const prefix = join(cacheRoot(), v);
  const bin = join(prefix, "node_modules", ".bin", "claude");
  if (versionOf(bin) === v) return { version: v, path: bin, installed: false };
  mkdirSync(prefix, { recursive: true });
  log(`installing @anthropic-ai/claude-code@${v} into ${prefix} …`);
  const r = spawnSync(
    "npm",
    ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", `@anthropic-ai/claude-code@${v}`],
    { encoding: "utf8", stdio: ["ignore", "inherit", "inherit"], timeout: 600_000 },
  );
  if (r.status !== 0 || versionOf(bin) !== v)
    throw new Error(`installing @anthropic-ai/claude-code@${v} into ${prefix} failed (npm exit ${r.status})`);
  return { version: v, path: bin, installed: true };
}
