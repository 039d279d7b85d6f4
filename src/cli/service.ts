/**
 * `claude-sessions service install|status|logs|uninstall`: the server as a per-user service, `serve --http`, so
 * schedules fire and webhooks go out while nobody is connected. Linux: a systemd user unit
 * (`~/.config/systemd/user/claude-sessions.service`); macOS: a launchd agent
 * (`~/Library/LaunchAgents/com.claude-sessions.serve.plist`). The unit names no secret: the bearer token is the
 * server's `<state>/token` (0600) unless the operator's env file (`--env-file`, 0600, systemd only) sets
 * CLAUDE_SESSIONS_TOKEN. Stopping sends SIGTERM to the server alone (KillMode=process): it drains — tmux sessions
 * live on in their own server, pty and headless ones are hibernated — so `systemctl --user restart` loses nothing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SessionError } from "../core/errors.js";

export const SERVICE_HELP = `  claude-sessions service install [--listen HOST:PORT] [--env-file FILE] [--no-start]
  claude-sessions service status | logs [-f] | uninstall
                                  run serve --http as a systemd user unit (launchd agent on macOS)`;

const UNIT = "claude-sessions.service";
const LABEL = "com.claude-sessions.serve";
/** Variables a unit carries from the installing shell: where things are, never a secret. */
const CARRIED = [
  "CLAUDE_SESSIONS_DIR",
  "CLAUDE_PATH",
  "PATH",
  "CLAUDE_SESSIONS_WEBHOOKS",
  "CLAUDE_SESSIONS_TOOLSETS",
  "CLAUDE_SESSIONS_TMUX_SOCKET",
  "CLAUDE_SESSIONS_LOG_LEVEL",
];

export interface ServiceOptions {
  listen: string;
  envFile?: string;
  env: NodeJS.ProcessEnv;
  node: string;
  bin: string;
}

function usage(): SessionError {
  return new SessionError("INVALID_ARGUMENT", `usage:\n${SERVICE_HELP}`);
}

/** A value safe inside a unit's line and a plist's string: no newline, no control character, no quote games. */
function unitValue(name: string, v: string): string {
  if (/[\x00-\x1f\x7f"\\%$]/.test(v))
    throw new SessionError(
      "INVALID_ARGUMENT",
      `${name} has a character a service file cannot carry safely (a control character, a quote, a backslash, % or $)`,
    );
  return v;
}

export function systemdUnit(o: ServiceOptions): string {
  const env = CARRIED.filter((k) => o.env[k]).map((k) => `Environment="${k}=${unitValue(k, o.env[k]!)}"`);
  return [
    "[Unit]",
    "Description=claude-sessions: MCP server and web view (serve --http)",
    "After=network.target",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart="${unitValue("node", o.node)}" "${unitValue("bin", o.bin)}" serve --http ${unitValue("--listen", o.listen)}`,
    ...env,
    ...(o.envFile ? [`EnvironmentFile=${unitValue("--env-file", o.envFile)}`] : []),
    // SIGTERM to the server alone: it drains; the tmux server it started keeps the tmux sessions.
    "KillMode=process",
    "KillSignal=SIGTERM",
    "TimeoutStopSec=30",
    "Restart=on-failure",
    "RestartSec=5",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function launchdPlist(o: ServiceOptions, logDir: string): string {
  const args = [o.node, o.bin, "serve", "--http", o.listen].map((a) => `    <string>${xml(unitValue("argument", a))}</string>`);
  const env = CARRIED.filter((k) => o.env[k]).map((k) => `    <key>${k}</key><string>${xml(unitValue(k, o.env[k]!))}</string>`);
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>${LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${args.join("\n")}
  </array>
  <key>EnvironmentVariables</key>
  <dict>
${env.join("\n")}
  </dict>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>
  <key>ExitTimeOut</key><integer>30</integer>
  <key>StandardErrorPath</key><string>${xml(join(logDir, "claude-sessions.log"))}</string>
</dict>
</plist>
`;
}

export function unitPath(env: NodeJS.ProcessEnv, platform = process.platform): string {
  const home = env.HOME || homedir();
  if (platform === "darwin") return join(home, "Library", "LaunchAgents", `${LABEL}.plist`);
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "systemd", "user", UNIT);
}

function run(file: string, args: string[]): number {
  const r = spawnSync(file, args, { stdio: "inherit" });
  if (r.error) throw new SessionError("PROCESS_ERROR", `${file} could not run: ${r.error.message}`);
  return r.status ?? 1;
}

/** `stateDir`: the state directory the unit's server uses (this command's, resolved). */
export function runServiceCommand(
  args: string[],
  stateDir: string,
  print: (s: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const [sub, ...rest] = args;
  const mac = process.platform === "darwin";
  const path = unitPath(env);
  switch (sub) {
    case "install": {
      let listen = "127.0.0.1:8914";
      let envFile: string | undefined;
      let start = true;
      for (let i = 0; i < rest.length; i++) {
        const a = rest[i];
        if (a === "--no-start") start = false;
        else if (a === "--listen" && rest[i + 1]) listen = rest[++i]!;
        else if (a === "--env-file" && rest[i + 1]) envFile = resolve(rest[++i]!);
        else throw usage();
      }
      if (!/^([A-Za-z0-9.-]+:|\[[0-9a-fA-F:]+\]:)?\d{1,5}$/.test(listen))
        throw new SessionError("INVALID_ARGUMENT", `--listen ${JSON.stringify(listen)} is not [HOST:]PORT`);
      if (envFile !== undefined) {
        if (mac)
          throw new SessionError(
            "UNSUPPORTED_OPTION",
            "--env-file is for systemd; on macOS put the variables in the plist's EnvironmentVariables yourself (no secret: the token is <state>/token)",
          );
        let st;
        try {
          st = statSync(envFile);
        } catch {
          throw new SessionError("INVALID_ARGUMENT", `--env-file ${envFile} cannot be read`);
        }
        if (!st.isFile() || (process.getuid && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0)
          throw new SessionError(
            "PERMISSION_DENIED",
            `--env-file ${envFile} must be your regular file with mode 0600 (it may hold the token)`,
            { suggestion: `chmod 600 ${envFile}` },
          );
      }
      const o: ServiceOptions = {
        listen,
        env: { ...env, CLAUDE_SESSIONS_DIR: stateDir },
        node: process.execPath,
        bin: resolve(dirname(fileURLToPath(import.meta.url)), "..", "bin.js"),
        ...(envFile ? { envFile } : {}),
      };
      if (!isAbsolute(o.bin) || !existsSync(o.bin))
        throw new SessionError("INTERNAL", `the server's entry point ${o.bin} is missing`);
      mkdirSync(dirname(path), { recursive: true });
      const logDir = join(env.HOME || homedir(), "Library", "Logs");
      writeFileSync(path, mac ? launchdPlist(o, logDir) : systemdUnit(o), { mode: 0o644 });
      print(`wrote ${path}`);
      if (!start) return 0;
      if (mac) return run("launchctl", ["load", "-w", path]);
      if (run("systemctl", ["--user", "daemon-reload"]) !== 0) return 1;
      return run("systemctl", ["--user", "enable", "--now", UNIT]);
    }
    case "status":
      if (rest.length) throw usage();
      if (!existsSync(path)) print(`not installed (${path} does not exist)`);
      return mac ? run("launchctl", ["list", LABEL]) : run("systemctl", ["--user", "status", "--no-pager", UNIT]);
    case "logs":
      if (rest.some((a) => a !== "-f")) throw usage();
      if (mac)
        return run("tail", [
          "-n",
          "200",
          ...(rest.includes("-f") ? ["-f"] : []),
          join(env.HOME || homedir(), "Library", "Logs", "claude-sessions.log"),
        ]);
      return run("journalctl", ["--user", "-u", UNIT, "-n", "200", "--no-pager", ...(rest.includes("-f") ? ["-f"] : [])]);
    case "uninstall": {
      if (rest.length) throw usage();
      if (mac) run("launchctl", ["unload", "-w", path]);
      else run("systemctl", ["--user", "disable", "--now", UNIT]);
      rmSync(path, { force: true });
      if (!mac) run("systemctl", ["--user", "daemon-reload"]);
      print(`removed ${path}`);
      return 0;
    }
    default:
      throw usage();
  }
}
