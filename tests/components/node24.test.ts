/**
 * Two commands on any machine: `npm install` run by a node older than the project needs (Debian's Node 20) sets up
 * Node 24 by itself (scripts/node24.cjs, the preinstall step), and from then on npm scripts, npx bins and node-pty run
 * on Node 24 — checked on a small project that has the same preinstall step and the same node-pty, installed by the
 * old node's npm with nothing else on PATH. A new enough node gets nothing; a copy installed as someone else's
 * dependency on an old node stops, saying what to do.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/harness.js";

const dir = mkdtempSync(join(tmpdir(), "cs-node24-"));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }));

const SCRIPT = join(ROOT, "scripts", "node24.cjs");
const { headersDir } = createRequire(import.meta.url)(SCRIPT) as { headersDir: (dir: string) => string | null };
const versionOf = (node: string): string | null => {
  const r = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
};
const tooOld = (v: string) => {
  const [a, b] = v.split(".").map(Number) as [number, number];
  return !(a >= 24 || (a === 22 && b >= 22));
};
/** npm's environment as a newcomer's shell has it: none of the npm_* settings of the `npm test` running this suite. */
const cleanEnv = (path: string): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))),
  PATH: path,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  npm_config_prefer_offline: "true",
});
const whichNpm = execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim();

/** A node older than the project needs: the machine's own (Debian's Node 20), else node@20 from the npm registry. */
function oldNode(): string {
  for (const c of ["/usr/bin/node", "/usr/local/bin/node"]) {
    const v = existsSync(c) ? versionOf(c) : null;
    if (v && tooOld(v)) return c;
  }
  execFileSync(whichNpm, ["install", "--no-save", "--loglevel=error", "--prefix", join(dir, "node20"), "node@20"], {
    env: cleanEnv(process.env.PATH ?? ""),
  });
  return join(dir, "node20", "node_modules", ".bin", "node");
}

/** A project with this one's preinstall step, node-pty (the version locked here) and a bin of its own. */
function project(name: string, at = join(dir, name)): string {
  mkdirSync(join(at, "scripts"), { recursive: true });
  copyFileSync(SCRIPT, join(at, "scripts", "node24.cjs"));
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>;
  };
  const pty = lock.packages["node_modules/node-pty"]!.version;
  const pkg = {
    name,
    version: "1.0.0",
    private: true,
    bin: { [`${name}-bin`]: "bin.js" },
    scripts: { preinstall: "node scripts/node24.cjs", "node-version": "node -p process.versions.node" },
    optionalDependencies: { "node-pty": pty },
    allowScripts: { "node-pty": true },
  };
  writeFileSync(join(at, "package.json"), JSON.stringify(pkg, null, 2));
  writeFileSync(join(at, "bin.js"), "#!/usr/bin/env node\nconsole.log(process.versions.node);\n");
  chmodSync(join(at, "bin.js"), 0o755);
  return at;
}

describe("npm install on an old node", () => {
  const old = oldNode();
  const oldPath = [dirname(old), "/usr/local/bin", "/usr/bin", "/bin", dirname(whichNpm)].join(":");
  const run = (cmd: string, args: string[], cwd: string) => {
    const r = spawnSync(cmd, args, { cwd, env: cleanEnv(oldPath), encoding: "utf8" });
    return { status: r.status, out: r.stdout.trim(), err: r.stderr };
  };

  it("fetches Node 24 into the project; npm scripts, npx bins and node-pty (built against Node 24's headers) use it", () => {
    expect(tooOld(run("node", ["-p", "process.versions.node"], dir).out)).toBe(true);
    const app = project("cs-try");
    const first = run("npm", ["install"], app);
    expect(first.status, first.err).toBe(0);
    expect(first.err).toContain("installing node@24 from the npm registry");

    const node24 = join(app, ".node24", "node_modules", ".bin", "node");
    const v24 = versionOf(node24)!;
    expect(v24).toMatch(/^24\./);
    expect(realpathSync(join(app, "node_modules", ".bin", "node"))).toBe(realpathSync(node24));

    // What the old node's npm runs from here on: scripts and bins find `node` = Node 24.
    expect(run("npm", ["run", "-s", "node-version"], app).out).toBe(v24);
    expect(run("npx", ["cs-try-bin"], app).out).toBe(v24);

    // node-pty was rebuilt by Node 24 against Node 24's headers (not the old node's), and works there.
    const gypi = readFileSync(join(app, "node_modules", "node-pty", "build", "config.gypi"), "utf8");
    const headers = headersDir(join(app, ".node24"));
    expect(headers).toContain(join(app, ".node24"));
    expect(gypi).toContain(`"nodedir": "${headers}"`);
    const pty = spawnSync(
      node24,
      ["-e", 'const t = require("node-pty").spawn("/bin/echo", ["pty-ok"], {}); t.onData((d) => process.stdout.write(d));'],
      { cwd: app, encoding: "utf8", timeout: 30_000 },
    );
    expect(pty.stdout).toContain("pty-ok");

    // A second install finds Node 24 in place: no download, the link stays.
    const again = run("npm", ["install"], app);
    expect(again.status, again.err).toBe(0);
    expect(again.err).not.toContain("installing node@24");
    expect(run("npm", ["run", "-s", "node-version"], app).out).toBe(v24);
  }, 300_000);

  it("installed as someone else's dependency, stops with what to do and fetches nothing", () => {
    const dep = project("claude-sessions", join(dir, "consumer", "node_modules", "claude-sessions"));
    const r = run("node", [join(dep, "scripts", "node24.cjs")], dep);
    expect(r.status).toBe(1);
    expect(r.err).toContain("claude-sessions needs Node.js 24 LTS (or 22.22+)");
    expect(existsSync(join(dep, ".node24"))).toBe(false);
    expect(existsSync(join(dep, "node_modules"))).toBe(false);
  });
});

describe("npm install on a new enough node", () => {
  it("changes nothing: no Node download, no link", () => {
    const app = project("cs-new");
    const r = spawnSync(process.execPath, [join(app, "scripts", "node24.cjs")], {
      cwd: app,
      env: cleanEnv(process.env.PATH ?? ""),
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(existsSync(join(app, ".node24"))).toBe(false);
    expect(existsSync(join(app, "node_modules"))).toBe(false);
  });
});
