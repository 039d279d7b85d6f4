/**
 * Test hosts for the nodes suites and bench: each one is a network namespace made here (ip netns, a veth pair with a
 * 10.231.<n>.0/30 of its own), running Debian's OpenSSH server as a Unix user of its own (its own HOME, state
 * directory and tmux server). The coordinator under test reaches it with a real `ssh` over that link, and a link
 * cut is `ip link set <veth> down`. Needs root (namespaces, users, sshd): without it the suites skip, saying so; on
 * CI they fail instead. Everything made here is removed in `destroy()` — namespaces, users and the processes of those
 * users, by pid — and nothing talks to any address but the hosts' own and loopback.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

const SSHD = "/usr/sbin/sshd";

/** Why test hosts cannot be made on this machine (undefined: they can). */
export function testHostsMissing() {
  if (process.getuid?.() !== 0) return "test hosts need root (network namespaces, users, sshd)";
  for (const [bin, pkg] of [
    [SSHD, "openssh-server"],
    ["/usr/bin/ssh", "openssh-client"],
    ["/usr/sbin/ip", "iproute2"],
    ["/usr/sbin/useradd", "passwd"],
  ]) {
    try {
      statSync(bin);
    } catch {
      return `${bin} is missing (apt-get install ${pkg})`;
    }
  }
  return undefined;
}

/** On CI missing test hosts are a failure; elsewhere the suite is skipped with the reason. */
export function testHostsOrSkip() {
  const why = testHostsMissing();
  if (!why) return true;
  if (process.env.CI)
    throw new Error(`${why}, and CI must run the nodes suites (.ci/run installs openssh-server and runs as root)`);
  console.warn(`\n*** ${why}: SKIPPING the nodes suites over test hosts. ***\n`);
  return false;
}

/** @param {string} cmd @param {string[]} args */
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });

/** Claims a file for this process (its pid inside); a claim of a process that is gone is taken over. */
function claim(path) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: "wx" });
      return true;
    } catch {
      let owner;
      try {
        owner = Number(readFileSync(path, "utf8").trim());
      } catch {
        continue; // released meanwhile: try again
      }
      // Empty: its owner is writing it. Ours: an earlier set of hosts of this process.
      if (!owner || owner === process.pid) return false;
      try {
        process.kill(owner, 0);
        return false; // alive: its subnet
      } catch {
        /* gone: take it over */
      }
      try {
        unlinkSync(path);
      } catch {
        /* taken over by another meanwhile */
      }
    }
  }
  return false;
}

/** The Node binary and the package must be readable by the node users: every ancestor directory searchable by others. */
/** @param {string} path */
function assertReadableByOthers(path) {
  for (let p = path; ; p = dirname(p)) {
    if ((statSync(p).mode & 0o001) === 0)
      throw new Error(
        `${p} is not searchable by other users (mode ${(statSync(p).mode & 0o777).toString(8)}); the test hosts' users need to read ${path}`,
      );
    if (p === dirname(p)) return;
  }
}

/**
 * Makes `count` hosts. `env` is added to every node's server environment (e.g. MAX_CONCURRENT_SESSIONS).
 * Host i uses a 10.231.<n>.0/30 that no interface here has yet and names made of `tag` (short: interface names are
 * 15 characters at most).
 */
/** @param {number} count @param {{tag?: string, env?: Record<string,string>, root?: string}} opts @returns {import("./test-hosts.d.mts").TestHosts} */
export function makeTestHosts(count, opts = {}) {
  const tag = opts.tag ?? `t${process.pid % 10000}`;
  // Subnets already on this machine (another run's hosts, or ones an interrupted run left behind) are skipped: a second
  // veth in the same /30 would take the route, and ssh would reach the wrong namespace ("connection refused").
  const used = new Set(
    [...spawnSync("ip", ["-4", "-o", "addr", "show"], { encoding: "utf8" }).stdout.matchAll(/ 10\.231\.(\d+)\./g)].map((m) =>
      Number(m[1]),
    ),
  );
  // Each subnet is also claimed with a file made exclusively (O_EXCL), so that two test files setting up hosts at the
  // same moment (vitest runs two at once) cannot both take one: the second's ssh would reach the first's namespace
  // ("Permission denied (publickey)": another user's sshd). A claim whose process is gone is taken over.
  const claims = join(tmpdir(), "cs-test-nets");
  mkdirSync(claims, { recursive: true });
  const nets = [];
  for (let k = 1 + (process.pid % 200), tries = 0; nets.length < count && tries < 500; k = (k % 250) + 1, tries++) {
    if (used.has(k) || !claim(join(claims, String(k)))) continue;
    nets.push(k);
  }
  if (nets.length < count) throw new Error("no free 10.231.n.0/30 subnet for the test hosts");
  const root = mkdtempSync(join(tmpdir(), "cs-hosts-"));
  /** @type {{netns: string[], users: string[], veths: string[], sshd: import("node:child_process").ChildProcess[]}} */
  const made = { netns: [], users: [], veths: [], sshd: [] };
  // The package the hosts run: this checkout, or a copy of it (the bench's snapshot).
  const pkg = opts.root ?? ROOT;
  const CLI = join(pkg, "dist", "bin.js");
  const FIXTURES = join(pkg, "tests", "fixtures");
  const destroy = () => {
    for (const p of made.sshd) if (p.pid && p.exitCode === null) p.kill("SIGTERM");
    for (const u of made.users) {
      const uid = Number(spawnSync("id", ["-u", u], { encoding: "utf8" }).stdout.trim());
      if (uid > 0) for (const pid of pidsOf(uid)) safeKill(pid);
    }
    for (const v of made.veths) spawnSync("ip", ["link", "del", v]);
    for (const n of made.netns) spawnSync("ip", ["netns", "del", n]);
    for (const u of made.users) spawnSync("userdel", ["-r", "-f", u], { stdio: "ignore" });
    for (const k of nets) rmSync(join(claims, String(k)), { force: true });
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const node = process.execPath;
    for (const p of [node, CLI, join(FIXTURES, "bin", "claude")]) assertReadableByOthers(p);
    mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
    const key = join(root, "id_ed25519");
    run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
    const hostKey = join(root, "host_ed25519");
    run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
    /** @type {import("./test-hosts.d.mts").TestHost[]} */
    const hosts = [];
    for (let i = 0; i < count; i++) {
      const name = `h${i + 1}`;
      const ns = `cs-${tag}-${name}`;
      const veth = `${tag}${name}a`.slice(0, 15);
      const peer = `${tag}${name}b`.slice(0, 15);
      const net = `10.231.${nets[i]}`;
      const gateway = `${net}.1`;
      const address = `${net}.2`;
      run("ip", ["netns", "add", ns]);
      made.netns.push(ns);
      run("ip", ["link", "add", veth, "type", "veth", "peer", "name", peer]);
      made.veths.push(veth);
      run("ip", ["link", "set", peer, "netns", ns]);
      run("ip", ["addr", "add", `${gateway}/30`, "dev", veth]);
      run("ip", ["link", "set", veth, "up"]);
      run("ip", ["-n", ns, "addr", "add", `${address}/30`, "dev", peer]);
      run("ip", ["-n", ns, "link", "set", peer, "up"]);
      run("ip", ["-n", ns, "link", "set", "lo", "up"]);
      const user = `cs${tag}${name}`.slice(0, 31);
      // "*": no password, but not a locked account (sshd without PAM refuses locked ones, even with a key).
      run("useradd", ["-m", "-s", "/bin/sh", "-p", "*", user]);
      made.users.push(user);
      const uid = Number(run("id", ["-u", user]).trim());
      const gid = Number(run("id", ["-g", user]).trim());
      const home = run("sh", ["-c", `getent passwd ${user} | cut -d: -f6`]).trim();
      const ssh = join(home, ".ssh");
      mkdirSync(ssh, { mode: 0o700 });
      writeFileSync(join(ssh, "authorized_keys"), readFileSync(`${key}.pub`), { mode: 0o600 });
      const work = join(home, "work");
      mkdirSync(work);
      for (const p of [ssh, join(ssh, "authorized_keys"), work]) chownSync(p, uid, gid);
      const stateDir = join(home, "state");
      const socket = `cs-node-${name}`;
      const conf = join(root, `sshd-${name}.conf`);
      writeFileSync(
        conf,
        [
          `ListenAddress ${address}`,
          "Port 22",
          `HostKey ${hostKey}`,
          `PidFile ${join(root, `sshd-${name}.pid`)}`,
          `AllowUsers ${user}`,
          "PasswordAuthentication no",
          "KbdInteractiveAuthentication no",
          "PubkeyAuthentication yes",
          "UsePAM no",
          // ~/.ssh/environment: a node's own settings and secrets, as an operator's shell profile would hold them.
          "PermitUserEnvironment yes",
          "PermitRootLogin no",
          // A connection whose client is gone (a cut link) is dropped by the server side too.
          "ClientAliveInterval 2",
          "ClientAliveCountMax 3",
          "",
        ].join("\n"),
      );
      const sshd = spawn("ip", ["netns", "exec", ns, SSHD, "-D", "-e", "-f", conf], { stdio: ["ignore", "ignore", "pipe"] });
      made.sshd.push(sshd);
      let sshdErr = "";
      sshd.stderr?.on("data", (b) => (sshdErr = (sshdErr + b.toString()).slice(-4000)));
      const sshBase = [
        "ssh",
        "-F",
        "/dev/null",
        "-i",
        key,
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "ConnectTimeout=5",
      ];
      const target = `${user}@${address}`;
      const env = {
        PATH: [dirname(node), join(FIXTURES, "bin"), "/usr/local/bin", "/usr/bin", "/bin"].join(":"),
        LANG: "C.UTF-8",
        CLAUDE_SESSIONS_DIR: stateDir,
        CLAUDE_SESSIONS_TMUX_SOCKET: socket,
        CLAUDE_PATH: join(FIXTURES, "bin", "claude"),
        CLAUDE_SESSIONS_START_TIMEOUT_MS: "15000",
        CLAUDE_SESSIONS_KILL_GRACE_MS: "2000",
        CLAUDE_SESSIONS_STRICT_RESULTS: "1",
        CLAUDE_SESSIONS_LOG_FILE: join(home, "server.log"),
        CLAUDE_SESSIONS_LOG_LEVEL: "debug",
        ...opts.env,
      };
      // The remote command line is read by the user's shell: every word here is a plain path or name.
      const remote = ["env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), node, CLI];
      hosts.push({
        name,
        address,
        gateway,
        user,
        home,
        stateDir,
        socket,
        veth,
        work,
        exec: [...sshBase, target, "--", ...remote],
        attach: [...sshBase, "-t", target, "--"],
        cut: () => run("ip", ["link", "set", veth, "down"]),
        setUserEnv: (vars) => {
          const p = join(ssh, "environment");
          writeFileSync(
            p,
            Object.entries(vars)
              .map(([k, v]) => `${k}=${v}\n`)
              .join(""),
            { mode: 0o600 },
          );
          chownSync(p, uid, gid);
        },
        chownHome: () => run("chown", ["-R", `${uid}:${gid}`, home]),
        restore: () => {
          run("ip", ["link", "set", veth, "up"]);
          // The address's route comes back with the link.
          spawnSync("ip", ["addr", "add", `${gateway}/30`, "dev", veth], { stdio: "ignore" });
        },
        ssh: (args) => run(sshBase[0], [...sshBase.slice(1), target, "--", ...args]),
      });
      // sshd is listening when a connection is answered.
      const until = Date.now() + 10_000;
      for (;;) {
        const r = spawnSync(sshBase[0], [...sshBase.slice(1), target, "--", "true"], { encoding: "utf8", timeout: 10_000 });
        if (r.status === 0) break;
        if (Date.now() > until) throw new Error(`sshd on ${name} did not answer: ${r.stderr}\nsshd: ${sshdErr}`);
        spawnSync("sleep", ["0.1"]);
      }
    }
    return { hosts, destroy };
  } catch (e) {
    destroy();
    throw e;
  }
}

/** Processes of a user (by uid), read from /proc. */
/** @param {number} uid */
function pidsOf(uid) {
  const out = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "utf8"));
      if (m && Number(m[1]) === uid) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** @param {number} pid */
function safeKill(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    /* gone */
  }
}

/** Writes a coordinator's nodes.json (mode 0600) and returns its path. */
/** @param {string} dir @param {Record<string, {exec?: string[], url?: string, token_file?: string, attach?: string[]}>} nodes */
export function writeNodesFile(dir, nodes) {
  const p = join(dir, "nodes.json");
  writeFileSync(p, JSON.stringify({ nodes }, null, 2), { mode: 0o600 });
  chmodSync(p, 0o600);
  return p;
}

/** A "node" on this machine: the built server with a world of its own, reached through `env` instead of ssh. */
/** @param {Record<string,string>} env */
export function loopbackExec(env) {
  return ["env", "-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, join(ROOT, "dist", "bin.js")];
}
