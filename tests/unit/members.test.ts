/**
 * Issue 25's pure parts: a team session's member launch (the configuration names the secret's variable, never the
 * secret; its hash verifies that secret alone), each runner's plan (--mcp-config on a terminal, the SDK's extraArgs
 * headless, the member tools allowed in the settings), and the notice a shutdown request makes.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hooksSettings } from "../../src/claude/hooks.js";
import { childEnv } from "../../src/claude/launch.js";
import { initialFold, reduce } from "../../src/events/reducer.js";
import { buildSdkOptions } from "../../src/runners/headless/options.js";
import { withMemberTools } from "../../src/runners/runner.js";
import { noticeOf } from "../../src/server/mcp/notify.js";
import { forgetMemberEnv, memberLaunch, verifyMemberSecret } from "../../src/sessions/teams/members.js";

const root = mkdtempSync(join(tmpdir(), "cs-members-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a team session's member launch", () => {
  it("puts the secret in the environment only; the configuration names its variable; the hash verifies it alone", async () => {
    const dir = join(root, "s1");
    mkdirSync(dir);
    const { env, member } = memberLaunch(root, dir, "s1", true);
    const secret = env.CLAUDE_SESSIONS_MEMBER_SECRET!;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(env).toMatchObject({
      CLAUDE_SESSIONS_MEMBER_SOCKET: join(root, "sockets", `${process.pid}.sock`),
      CLAUDE_SESSIONS_TEAM_LEAD: "1",
    });
    for (const f of member.files) {
      expect(f.text).not.toContain(secret);
      writeFileSync(f.path, f.text);
    }
    const cfg = JSON.parse(readFileSync(member.configPath, "utf8")) as {
      mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }>;
    };
    const s = cfg.mcpServers["claude-sessions-team"]!;
    expect(s.command).toBe(process.execPath);
    expect(s.args.at(-1)).toBe("member");
    expect(s.args.at(-2)).toMatch(/dist\/bin\.js$/);
    expect(s.env).toMatchObject({
      CLAUDE_SESSIONS_MEMBER_SECRET: "${CLAUDE_SESSIONS_MEMBER_SECRET}",
      CLAUDE_SESSIONS_MEMBER_SOCKET: "${CLAUDE_SESSIONS_MEMBER_SOCKET}",
      CLAUDE_SESSIONS_ID: "s1",
      CLAUDE_SESSIONS_TEAM_LEAD: "1",
    });
    expect(await verifyMemberSecret(root, "s1", secret)).toBe(true);
    expect(await verifyMemberSecret(root, "s1", secret.slice(1) + "x")).toBe(false);
    expect(await verifyMemberSecret(root, "nobody", secret)).toBe(false);
    // A new launch (resume, wake) makes a new secret: the old one no longer verifies.
    const again = memberLaunch(root, dir, "s1", false);
    for (const f of again.member.files) writeFileSync(f.path, f.text);
    expect(again.env.CLAUDE_SESSIONS_TEAM_LEAD).toBeUndefined();
    expect(await verifyMemberSecret(root, "s1", secret)).toBe(false);
    expect(await verifyMemberSecret(root, "s1", again.env.CLAUDE_SESSIONS_MEMBER_SECRET!)).toBe(true);
  });

  it("a server inside a team session forgets that session's member variables at start (none of its sessions gets them)", () => {
    const outer: NodeJS.ProcessEnv = {
      PATH: "/bin",
      CLAUDE_SESSIONS_MEMBER_SECRET: "outer",
      CLAUDE_SESSIONS_MEMBER_SOCKET: "/o.sock",
      CLAUDE_SESSIONS_TEAM_LEAD: "1",
    };
    expect(forgetMemberEnv(outer).sort()).toEqual([
      "CLAUDE_SESSIONS_MEMBER_SECRET",
      "CLAUDE_SESSIONS_MEMBER_SOCKET",
      "CLAUDE_SESSIONS_TEAM_LEAD",
    ]);
    expect(outer).toEqual({ PATH: "/bin" });
    // A session's own variables pass through childEnv (a headless plan's environment is built twice).
    expect(childEnv({ PATH: "/bin", CLAUDE_SESSIONS_MEMBER_SECRET: "own" }, {})).toEqual({
      PATH: "/bin",
      CLAUDE_SESSIONS_MEMBER_SECRET: "own",
    });
  });

  it("allows the member tools in the settings, next to the deny rules", () => {
    const member = { configPath: "/s/x/member-mcp.json", serverName: "claude-sessions-team", files: [] };
    const settings = withMemberTools(hooksSettings("/s/x/events.jsonl"), member) as {
      permissions: { allow: string[]; deny: string[] };
    };
    expect(settings.permissions.allow).toEqual(["mcp__claude-sessions-team"]);
    expect(settings.permissions.deny.length).toBeGreaterThan(0);
    expect(withMemberTools(hooksSettings("/s/x/events.jsonl"), undefined)).not.toHaveProperty("permissions.allow");
  });

  it("headless: the SDK gets the file as --mcp-config (extraArgs), never the secret", () => {
    const { options } = buildSdkOptions({
      cwd: "/w",
      claude_path: "/c",
      events_path: "/e",
      settings_path: "/s",
      env: { CLAUDE_SESSIONS_MEMBER_SECRET: "sekrit" },
      member_mcp_config: "/s/x/member-mcp.json",
    });
    expect(options.extraArgs).toEqual({ "mcp-config": "/s/x/member-mcp.json" });
    expect(JSON.stringify(options.extraArgs)).not.toContain("sekrit");
  });
});

describe("request_shutdown's event", () => {
  it("folds into shutdown_requested, cleared by the next process, and makes a warning notice", () => {
    const f = reduce({ ...initialFold(), status: "idle" }, { hook_event_name: "cs:shutdown_requested", reason: "done" });
    expect(f.shutdown_requested).toBe("done");
    expect(f.status).toBe("idle");
    const n = noticeOf({
      session_id: "s1",
      status: "idle",
      previous: "idle",
      events: [{ hook_event_name: "cs:shutdown_requested", reason: "done" }],
      fold: f,
    });
    expect(n).toEqual({
      level: "warning",
      notice: { event: "shutdown_requested", session_id: "s1", status: "idle", previous: "idle", reason: "done" },
    });
    expect(reduce(f, { hook_event_name: "cs:spawn" }).shutdown_requested).toBeUndefined();
  });
});
