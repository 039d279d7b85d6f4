// Runs first in `npm install` of this project (preinstall) and makes the install, every npm script and
// `npx claude-sessions` run on Node 24 when the machine's node is older than the project needs (Debian's Node 20):
//
//   1. Node 24 from the npm registry into .node24/ (`node@24` is a package carrying the real binary and its headers),
//      skipped when it is already there;
//   2. node_modules/.bin/node -> that binary: npm puts node_modules/.bin first on the PATH of every script it runs
//      (npm test, npm run build, npx ...), so `node` there, and every `#!/usr/bin/env node` bin (vitest, tsc, the
//      claude-sessions bin), is Node 24 from now on;
//   3. node-pty (the one native dependency) rebuilt by Node 24 against Node 24's headers: npm built it before this
//      script ran (dependencies' install scripts run before the root's preinstall), with the outer npm's Node 20.
//
// On a node that is new enough (22.22+ or 24) it does nothing: no download. Installed as someone else's dependency
// on an old node it cannot change how their project runs `node`, so it stops there saying what to do.
// CommonJS and no syntax newer than Node 10, so it runs on whatever `node` a newcomer has.
"use strict";
var fs = require("fs");
var path = require("path");
var childProcess = require("child_process");

var ROOT = path.join(__dirname, "..");
var DIR = path.join(ROOT, ".node24");
var NODE24 = path.join(DIR, "node_modules", ".bin", "node");
var SHIM = path.join(ROOT, "node_modules", ".bin", "node");

/** True when this project cannot run on Node `version` (it needs 22.22+ or 24). */
function tooOld(version) {
  var v = version.split(".").map(Number);
  return !(v[0] >= 24 || (v[0] === 22 && v[1] >= 22));
}

/** Whether this copy is installed inside another project (or globally), not a clone being set up. */
function isDependency(root) {
  return root.split(path.sep).indexOf("node_modules") !== -1;
}

/** The message for an old node when this package is someone else's dependency. */
function dependencyMessage(version) {
  return (
    "\nclaude-sessions needs Node.js 24 LTS (or 22.22+); this is Node " +
    version +
    ".\n" +
    "Install Node 24 (from nodejs.org, your package manager, or `npm install --prefix <dir> node@24`), put it first\n" +
    "on PATH and install again. A clone of the project sets Node 24 up by itself: git clone … && npm install.\n\n"
  );
}

/** Node 24's headers inside the node@24 package (node_modules/node/node_modules/node-<platform>-<arch>), or null. */
function headersDir(dir) {
  var base = path.join(dir, "node_modules", "node", "node_modules");
  var names = fs.existsSync(base) ? fs.readdirSync(base) : [];
  for (var i = 0; i < names.length; i++) {
    if (fs.existsSync(path.join(base, names[i], "include", "node", "node_version.h"))) return path.join(base, names[i]);
  }
  return null;
}

/** The version `bin` reports, or null when it does not run. */
function versionOf(bin) {
  var r = childProcess.spawnSync(bin, ["-p", "process.versions.node"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * The environment for the npm this script runs: the outer npm's own settings for this install (its command, its
 * lifecycle, its prefix, an `--omit`, a `--nodedir`) are left out; where to fetch from and how stay.
 */
function npmEnv(extra) {
  var env = {};
  var keep =
    /^npm_config_(.*registry|cache|userconfig|globalconfig|cafile|ca|cert|key|.*proxy|strict_ssl|offline|prefer_offline|prefer_online|fetch_.*)$/i;
  Object.keys(process.env).forEach(function (k) {
    if (!/^npm_/i.test(k) || keep.test(k)) env[k] = process.env[k];
  });
  Object.keys(extra || {}).forEach(function (k) {
    env[k] = extra[k];
  });
  return env;
}

/** Runs npm (the one running this install when known) with `node`; true when it succeeded. */
function npm(node, args, env) {
  var cli = process.env.npm_execpath;
  var r =
    cli && /\.c?js$/.test(cli)
      ? childProcess.spawnSync(node, [cli].concat(args), { cwd: ROOT, env: env, stdio: ["ignore", 2, 2] })
      : childProcess.spawnSync("npm", args, { cwd: ROOT, env: env, stdio: ["ignore", 2, 2] });
  return r.status === 0;
}

function say(line) {
  process.stderr.write("claude-sessions: " + line + "\n");
}

function main() {
  var version = process.versions.node;
  if (!tooOld(version)) return 0;
  if (isDependency(ROOT)) {
    process.stderr.write(dependencyMessage(version));
    return 1;
  }
  say("Node " + version + " is older than this project needs (22.22+ or 24); setting up Node 24 in .node24/");
  var have = fs.existsSync(NODE24) ? versionOf(NODE24) : null;
  if (!have || tooOld(have)) {
    say("installing node@24 from the npm registry into .node24/ (about 50 MB, once)");
    var ok = npm(
      process.execPath,
      ["install", "--no-save", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error", "--prefix", DIR, "node@24"],
      npmEnv(),
    );
    have = ok && fs.existsSync(NODE24) ? versionOf(NODE24) : null;
    if (!have || tooOld(have)) {
      process.stderr.write("\nclaude-sessions: could not install Node 24 from the npm registry into " + DIR + "\n\n");
      return 1;
    }
  }
  fs.mkdirSync(path.dirname(SHIM), { recursive: true });
  try {
    fs.unlinkSync(SHIM);
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
  }
  fs.symlinkSync(path.relative(path.dirname(SHIM), NODE24), SHIM);
  say("node_modules/.bin/node -> Node " + have + ": npm scripts, npm test and npx claude-sessions run on it");

  var headers = headersDir(DIR);
  if (fs.existsSync(path.join(ROOT, "node_modules", "node-pty", "package.json")) && headers) {
    say("rebuilding node-pty for Node " + have + " (its headers: " + path.relative(ROOT, headers) + ")");
    var binPath = path.dirname(SHIM) + path.delimiter + (process.env.PATH || "");
    var built = npm(NODE24, ["rebuild", "--loglevel=error", "node-pty"], npmEnv({ PATH: binPath, npm_config_nodedir: headers }));
    if (!built) say("node-pty did not build for Node 24; the pty backend will be unavailable (tmux and headless work)");
  }
  return 0;
}

module.exports = { tooOld: tooOld, isDependency: isDependency, headersDir: headersDir };

if (require.main === module) process.exitCode = main();
