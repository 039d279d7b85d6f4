/**
 * What the sandbox needs on this machine (Linux): bubblewrap, socat and ripgrep on the server's PATH, and user
 * namespaces bubblewrap can make. Probed once per server (a bwrap run of a few ms), then cached; `doctor` and
 * health_check report the same answer.
 */
import { spawnSync } from "node:child_process";
import { resolveProgram } from "../util/proc/programs.js";

export const SANDBOX_PROGRAMS = [
  { name: "bwrap", pkg: "bubblewrap" },
  { name: "socat", pkg: "socat" },
  { name: "rg", pkg: "ripgrep" },
] as const;

export interface SandboxDeps {
  ok: boolean;
  /** What is missing, in words (empty when ok). */
  missing: string[];
  /** The programs by absolute path (found on the server's PATH): the launcher never looks them up on a session's PATH. */
  tools?: { bwrap: string; socat: string; rg: string };
}

let cached: SandboxDeps | undefined;

export function sandboxDeps(pathVar: string | undefined = process.env.PATH, fresh = false): SandboxDeps {
  if (cached && !fresh) return cached;
  const missing: string[] = [];
  if (process.platform !== "linux") missing.push(`the sandbox runs on Linux only (this is ${process.platform})`);
  for (const p of SANDBOX_PROGRAMS)
    if (!resolveProgram(p.name, pathVar)) missing.push(`${p.name} (Debian package ${p.pkg}) is not on PATH`);
  const bwrap = resolveProgram("bwrap", pathVar);
  if (bwrap && !missing.length) {
    const r = spawnSync(bwrap, ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--unshare-pid", "--", "/bin/true"], {
      timeout: 10_000,
      encoding: "utf8",
    });
    if (r.status !== 0)
      missing.push(
        `bubblewrap cannot make namespaces here (${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0]}); ` +
          `unprivileged user namespaces may be off`,
      );
  }
  const socat = resolveProgram("socat", pathVar);
  const rg = resolveProgram("rg", pathVar);
  cached = {
    ok: missing.length === 0,
    missing,
    ...(bwrap && socat && rg && !missing.length ? { tools: { bwrap, socat, rg } } : {}),
  };
  return cached;
}
