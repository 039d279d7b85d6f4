import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const execFileP = promisify(execFile);
const DOPPLER = fileURLToPath(new URL("../fixtures/doppler-bin/doppler", import.meta.url));
const NODE = process.execPath;

const SECRET = "sup3r-s3cret-value";
const DATA = {
  tokens: {
    "dp.st.dev.tok": { project: "backend", config: "dev" },
    "dp.st.prd.tok": { project: "backend", config: "prd" },
    "dp.pt.personal": {},
  },
  projects: {
    backend: {
      dev: { API_SECRET: SECRET, SHARED: "from-doppler" },
      prd: { API_SECRET: "prd-secret" },
    },
  },
};

let dir: string;
let dataFile: string;
let childScript: string;

/** Environment without inherited Doppler or tmux variables. */
function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ["DOPPLER_TOKEN", "DOPPLER_PROJECT", "DOPPLER_CONFIG", "FAKE_DOPPLER_DATA", "TMUX", "TMUX_PANE"]) delete env[k];
  return { ...env, FAKE_DOPPLER_DATA: dataFile, ...extra };
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runDoppler(args: string[], env: NodeJS.ProcessEnv = baseEnv()): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const p = spawn(NODE, [DOPPLER, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("error", reject);
    p.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A child that prints one env var to a file. */
function printEnvTo(file: string, name: string): string[] {
  return [NODE, "-e", `require('fs').writeFileSync(${JSON.stringify(file)}, String(process.env[${JSON.stringify(name)}]))`];
}

async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 8000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function readJsonIfThere(file: string): Promise<any | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, "utf8"));
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "cs-doppler-"));
  dataFile = path.join(dir, "doppler-data.json");
  await fs.writeFile(dataFile, JSON.stringify(DATA));
  // A long-running child: records its pid, its parent (doppler) and whether stdout is a TTY; exits 42 on SIGTERM.
  childScript = path.join(dir, "child.cjs");
  await fs.writeFile(
    childScript,
    `const fs = require('fs');
const out = process.argv[2];
process.on('SIGTERM', () => { fs.writeFileSync(out + '.term', 'SIGTERM'); process.exit(42); });
fs.writeFileSync(out + '.tmp', JSON.stringify({ pid: process.pid, ppid: process.ppid, tty: !!process.stdout.isTTY }));
fs.renameSync(out + '.tmp', out);
setInterval(() => {}, 1000);
`,
  );
});

afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe("doppler stand-in: CLI surface", () => {
  it("is executable and reports a version", async () => {
    const { stdout } = await execFileP(DOPPLER, ["--version"], { env: baseEnv() });
    expect(stdout.trim()).toBe("v3.75.1");
  });

  it("refuses --command", async () => {
    const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "--command", "echo hi"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Error: --command is not supported by this stand-in");
  });
});

describe("doppler stand-in: secrets", () => {
  it("injects the secrets of the token scope into the child environment", async () => {
    const out = path.join(dir, "secret.txt");
    const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "--", ...printEnvTo(out, "API_SECRET")]);
    expect(r.code).toBe(0);
    expect(await fs.readFile(out, "utf8")).toBe(SECRET);
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });

  it("accepts --project=/--config= forms and DOPPLER_TOKEN from the environment", async () => {
    const out = path.join(dir, "secret-eq.txt");
    const r = await runDoppler(
      ["run", "--project=backend", "--config=prd", "--", ...printEnvTo(out, "API_SECRET")],
      baseEnv({ DOPPLER_TOKEN: "dp.st.prd.tok" }),
    );
    expect(r.code).toBe(0);
    expect(await fs.readFile(out, "utf8")).toBe("prd-secret");
  });

  it("takes project and config from DOPPLER_PROJECT / DOPPLER_CONFIG for a personal token", async () => {
    const out = path.join(dir, "secret-personal.txt");
    const r = await runDoppler(
      ["run", "-t", "dp.pt.personal", "--", ...printEnvTo(out, "API_SECRET")],
      baseEnv({ DOPPLER_PROJECT: "backend", DOPPLER_CONFIG: "dev" }),
    );
    expect(r.code).toBe(0);
    expect(await fs.readFile(out, "utf8")).toBe(SECRET);
  });

  it("lets secrets win over the environment unless --preserve-env", async () => {
    const out = path.join(dir, "shared.txt");
    const env = baseEnv({ SHARED: "from-env" });
    expect((await runDoppler(["run", "-t", "dp.st.dev.tok", "--", ...printEnvTo(out, "SHARED")], env)).code).toBe(0);
    expect(await fs.readFile(out, "utf8")).toBe("from-doppler");
    expect(
      (await runDoppler(["run", "-t", "dp.st.dev.tok", "--preserve-env", "--", ...printEnvTo(out, "SHARED")], env)).code,
    ).toBe(0);
    expect(await fs.readFile(out, "utf8")).toBe("from-env");
  });

  it("fails without a token", async () => {
    const r = await runDoppler(["run", "--", NODE, "-e", ""]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("Doppler Error: you must provide a token");
  });

  it("fails with an unknown token", async () => {
    const r = await runDoppler(["run", "-t", "nope", "--", NODE, "-e", ""]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe("Doppler Error: Invalid Auth token");
  });

  it("fails with an unknown project or config", async () => {
    const p = await runDoppler(["run", "-t", "dp.pt.personal", "-p", "frontend", "-c", "dev", "--", NODE, "-e", ""]);
    expect(p.code).toBe(1);
    expect(p.stderr.trim()).toBe("Doppler Error: Could not find requested project 'frontend'");
    const c = await runDoppler(["run", "-t", "dp.pt.personal", "-p", "backend", "-c", "stg", "--", NODE, "-e", ""]);
    expect(c.code).toBe(1);
    expect(c.stderr.trim()).toBe("Doppler Error: Could not find requested config 'stg'");
  });

  it("refuses a project/config outside the service token scope", async () => {
    const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "-c", "prd", "--", NODE, "-e", ""]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Doppler Error: .*'prd'/);
    expect(r.stderr).not.toContain("prd-secret");
  });

  it("does not run the command when it fails", async () => {
    const out = path.join(dir, "never.txt");
    await runDoppler(["run", "-t", "nope", "--", ...printEnvTo(out, "API_SECRET")]);
    expect(existsSync(out)).toBe(false);
  });
});

describe("doppler stand-in: exit codes", () => {
  it("passes the child's exit code through", async () => {
    for (const code of [0, 3, 77]) {
      const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "--", NODE, "-e", `process.exit(${code})`]);
      expect(r.code).toBe(code);
    }
  });

  it("exits 128+signal when the child is killed by a signal", async () => {
    const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "--", NODE, "-e", "process.kill(process.pid, 'SIGKILL')"]);
    expect(r.code).toBe(137);
  });

  it("reports a missing executable with exit 1", async () => {
    const r = await runDoppler(["run", "-t", "dp.st.dev.tok", "--", "cs-no-such-command-xyz"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Doppler Error: exec: "cs-no-such-command-xyz": executable file not found in $PATH');
  });
});

describe("doppler stand-in: signals without a terminal", () => {
  it("forwards SIGTERM by default when stdout is not a TTY", async () => {
    const ready = path.join(dir, "pipe-default.json");
    const p = spawn(NODE, [DOPPLER, "run", "-t", "dp.st.dev.tok", "--", NODE, childScript, ready], {
      env: baseEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => p.on("close", (code) => resolve(code)));
    try {
      const info = await waitFor(() => readJsonIfThere(ready), 8000, "child ready");
      expect(info.tty).toBe(false);
      expect(info.ppid).toBe(p.pid);
      p.kill("SIGTERM");
      expect(await exited).toBe(42);
      expect(await fs.readFile(`${ready}.term`, "utf8")).toBe("SIGTERM");
    } finally {
      if (p.exitCode === null) p.kill("SIGKILL");
    }
  });
});

describe("doppler stand-in: signals on a terminal (private tmux server)", () => {
  const sock = `cs-dop-${randomBytes(6).toString("hex")}`;
  // Own socket name AND own socket directory: never near the user's default server, nothing left behind.
  let tmuxEnv: NodeJS.ProcessEnv;
  const tmux = async (...args: string[]) =>
    (await execFileP("tmux", ["-L", sock, "-f", "/dev/null", ...args], { env: tmuxEnv })).stdout;
  const leftovers: number[] = [];

  beforeAll(async () => {
    tmuxEnv = baseEnv({ TMUX_TMPDIR: dir });
    // A placeholder session keeps the server up; remain-on-exit keeps dead panes so their exit status can be read.
    await tmux("new-session", "-d", "-s", "base", "-x", "80", "-y", "24", "sleep", "600");
    await tmux("set-option", "-g", "remain-on-exit", "on");
  });

  afterAll(async () => {
    for (const pid of leftovers) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await execFileP("tmux", ["-L", sock, "kill-server"], { env: tmuxEnv }).catch(() => {});
    // tmux 3.3 can leave its socket file behind; it lives under our temp dir, removed below.
  });

  async function startInPane(name: string, dopplerArgs: string[]) {
    const ready = path.join(dir, `${name}.json`);
    // A retry starts afresh: the pane of the attempt before (and its ready file) would make new-session fail.
    await tmux("kill-session", "-t", `=${name}`).catch(() => {});
    await fs.rm(ready, { force: true });
    await fs.rm(`${ready}.term`, { force: true });
    await tmux(
      "new-session",
      "-d",
      "-s",
      name,
      "-x",
      "80",
      "-y",
      "24",
      "-e",
      `FAKE_DOPPLER_DATA=${dataFile}`,
      NODE,
      DOPPLER,
      "run",
      "-t",
      "dp.st.dev.tok",
      ...dopplerArgs,
      "--",
      NODE,
      childScript,
      ready,
    );
    const info = await waitFor(() => readJsonIfThere(ready), 8000, `child in pane ${name}`);
    leftovers.push(info.pid, info.ppid);
    return { ready, info: info as { pid: number; ppid: number; tty: boolean } };
  }

  // tmux can report pane_dead=1 before pane_dead_status is known. On tmux builds linked with libutempter (Debian
  // and Ubuntu's 3.3a) the SIGCHLD can even be lost for good (tmux/tmux#311): the pane's process stays a zombie and
  // the status never appears until the server gets another SIGCHLD. Nudging our own private server with SIGCHLD
  // makes it reap. Waits for both the death and the status.
  const paneExit = async (name: string, timeoutMs = 8000) => {
    const t0 = Date.now();
    const serverPid = Number((await tmux("display-message", "-p", "#{pid}")).trim());
    return waitFor(
      async () => {
        const [dead, status] = (await tmux("display-message", "-p", "-t", `=${name}:`, "#{pane_dead}|#{pane_dead_status}"))
          .trim()
          .split("|");
        if (dead !== "1") return undefined;
        if (status) return Number(status);
        if (Date.now() - t0 > 300) process.kill(serverPid, "SIGCHLD");
        return undefined;
      },
      timeoutMs,
      `exit status of pane ${name}`,
    );
  };
  const paneDead = async (name: string) =>
    (await tmux("display-message", "-p", "-t", `=${name}:`, "#{pane_dead}")).trim() === "1";

  it("swallows SIGTERM when stdout is a terminal and --forward-signals is absent", async () => {
    const { ready, info } = await startInPane("swallow", []);
    expect(info.tty).toBe(true);
    process.kill(info.ppid, "SIGTERM");
    // "Nothing happens" needs time to pass: the signal is swallowed for as long as we look.
    await new Promise((r) => setTimeout(r, 700));
    expect(alive(info.ppid)).toBe(true);
    expect(alive(info.pid)).toBe(true);
    expect(existsSync(`${ready}.term`)).toBe(false);
    expect(await paneDead("swallow")).toBe(false);
    // SIGINT is swallowed as well.
    process.kill(info.ppid, "SIGINT");
    await new Promise((r) => setTimeout(r, 300)); // likewise: swallowed for as long as we look
    expect(alive(info.ppid)).toBe(true);
    // Killing the child directly ends doppler with 128+9.
    process.kill(info.pid, "SIGKILL");
    expect(await paneExit("swallow")).toBe(137);
  }, 20_000);

  it("forwards SIGTERM with --forward-signals and passes the exit code on", async () => {
    const { ready, info } = await startInPane("forward", ["--forward-signals"]);
    expect(info.tty).toBe(true);
    process.kill(info.ppid, "SIGTERM");
    expect(await paneExit("forward")).toBe(42);
    expect(await fs.readFile(`${ready}.term`, "utf8")).toBe("SIGTERM");
  }, 20_000);

  it("forwards SIGHUP even without --forward-signals", async () => {
    const { info } = await startInPane("hup", []);
    process.kill(info.ppid, "SIGHUP");
    // The child has no SIGHUP handler, so it dies of the forwarded signal: 128+1.
    expect(await paneExit("hup")).toBe(129);
  }, 20_000);
});
