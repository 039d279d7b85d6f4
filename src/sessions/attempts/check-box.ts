/**
 * The box a sandboxed session's checks run in (sandbox/check-box.ts): what to hide on this machine, and the
 * repository's git folder to put back. A box that cannot be made is SANDBOX_UNAVAILABLE: a sandboxed session's
 * checks never run outside it.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { Config } from "../../config.js";
import { SessionError } from "../../core/errors.js";
import type { CheckBox } from "../../sandbox/check-box.js";
import { sandboxDeps } from "../../sandbox/deps.js";
import { credentialPaths } from "../../sandbox/spec.js";
import { git } from "../../util/git.js";

function real(p: string): string | undefined {
  try {
    return existsSync(p) ? realpathSync(p) : undefined;
  } catch {
    return undefined;
  }
}

function inside(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

export async function checkBox(cfg: Config, cwd: string): Promise<CheckBox> {
  const deps = sandboxDeps();
  if (!deps.ok || !deps.tools) {
    throw new SessionError(
      "SANDBOX_UNAVAILABLE",
      `the checks of a sandboxed session cannot be confined here: ${deps.missing.join("; ")}.`,
      { suggestion: "Install what is missing; a sandboxed session's checks never run outside the sandbox." },
    );
  }
  const home = process.env.HOME || homedir();
  const configFile = join(process.env.CLAUDE_CONFIG_DIR || home, ".claude.json");
  // The temporary folders, which a check's program may be put back from (a Node or a clone under /tmp); the rest
  // stays hidden whatever a program needs.
  const temporary = realPlaces(["/tmp", "/var/tmp", process.env.TMPDIR]);
  const kept = realPlaces([
    "/run",
    "/var/run",
    process.env.XDG_RUNTIME_DIR,
    process.env.TMUX_TMPDIR,
    ...credentialPaths(home),
    cfg.stateDir,
    cfg.claudeConfigDir,
    configFile,
  ]);
  const dirs: string[] = [];
  const files: string[] = [];
  for (const p of new Set([...temporary, ...kept])) (statSync(p).isDirectory() ? dirs : files).push(p);
  // Outermost first; a place inside a hidden folder is hidden already.
  dirs.sort((a, b) => a.length - b.length);
  const hideDirs = dirs.filter((d, i) => !dirs.slice(0, i).some((o) => inside(d, o)));
  const hideFiles = files.filter((f) => !hideDirs.some((o) => inside(f, o)));
  const at = realpathSync(cwd);
  const common = await git(at, ["rev-parse", "--path-format=absolute", "--git-common-dir"]);
  const gitDir = common.code === 0 ? real(resolve(at, common.stdout.trim())) : undefined;
  const readOnly = gitDir && !inside(gitDir, at) && hideDirs.some((d) => inside(gitDir, d)) ? [gitDir] : [];
  return {
    bwrap: deps.tools.bwrap,
    cwd: at,
    hideDirs,
    hideFiles,
    readOnly,
    programsFrom: temporary.filter((p) => dirs.includes(p)),
    keepHidden: kept,
  };
}

/** The real paths of the places that exist (absolute ones only). */
function realPlaces(places: Array<string | undefined>): string[] {
  return places
    .filter((x): x is string => !!x && isAbsolute(x))
    .map((x) => real(x))
    .filter((x): x is string => !!x);
}
