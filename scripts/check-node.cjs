// Runs before `npm install` (preinstall): the project needs Node 22.22+ or 24. Stop early, saying how to get it,
// instead of installing with engine warnings and failing later. CommonJS and no syntax newer than Node 10, so it
// runs on whatever `node` a newcomer has.

/** The message for a Node version this project cannot use, or null when it can. */
function check(version) {
  var v = version.split(".").map(Number);
  if (v[0] >= 24 || (v[0] === 22 && v[1] >= 22)) return null;
  return (
    "\nclaude-sessions needs Node.js 24 LTS (or 22.22+); this is Node " + version + ".\n" +
    "Install Node 24 for this project from the npm registry and put it first on PATH, then run npm install again:\n\n" +
    "    source scripts/node24.sh && npm install\n\n"
  );
}

module.exports = { check: check };

if (require.main === module) {
  var message = check(process.versions.node);
  if (message) {
    process.stderr.write(message);
    process.exit(1);
  }
}
