/**
 * What the server decides for every launch instead of the CLI (issue #20): an explicit permission mode on start and
 * resume, the CLI's version recorded (a warning outside the tested range), the auto-updater off.
 */
import { chmodSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as api from "../../src/api/index.js";
import { cliVersion, compareVersions, parseCliVersion, TESTED_CLI, versionWarning } from "../../src/claude/versions.js";
import { loadConfig } from "../../src/config.js";
import { buildSdkOptions } from "../../src/runners/headless/options.js";
import { headlessOptionsOf } from "../../src/runners/headless/stored.js";
import { healthChecks } from "../../src/server/health.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/harness.js";

const f = fakeService();

/** A `claude` that only says its version (the fake backend never runs it). */
function cliReporting(version: string): string {
  const p = join(f.root, `claude-${version}`);
  writeFileSync(p, `#!/bin/sh\necho "${version} (Claude Code)"\n`);
  chmodSync(p, 0o755);
  return p;
}

const argvOf = (id: string) => f.fake.sessions.get(id)!.spec.argv;
const modeArgs = (id: string) => argvOf(id).filter((a) => a.startsWith("--permission-mode"));

describe("versions: one tested range", () => {
  it("reads `claude --version`, compares numerically, warns only outside the range", () => {
    expect(parseCliVersion("2.1.331 (Claude Code)\n")).toBe("2.1.331");
    expect(parseCliVersion("garbage")).toBeUndefined();
    expect(compareVersions("2.1.99", "2.1.197")).toBeLessThan(0);
    expect(compareVersions("2.10.0", "2.9.9")).toBeGreaterThan(0);
    expect(versionWarning(TESTED_CLI.oldest)).toBeUndefined();
    expect(versionWarning(TESTED_CLI.pinned)).toBeUndefined();
    expect(versionWarning(TESTED_CLI.newest)).toBeUndefined();
    // 2.1.332 passed the drift suite (2026-11-27) and is in the range; the next one is not yet.
    expect(versionWarning("2.1.332")).toBeUndefined();
    expect(versionWarning("2.1.333")).toMatch(/newer than the newest version checked/);
    expect(versionWarning("2.1.100")).toMatch(/older than the oldest supported/);
    expect(versionWarning("2.1.400")).toMatch(/newer than the newest version checked.*CLAUDE_PATH/);
    expect(versionWarning(undefined)).toMatch(/did not report its version/);
  });

  it("`claude --version` is read once per binary, and again when the file changes (an update in place)", async () => {
    const p = cliReporting("2.1.100");
    const log = join(f.root, "runs");
    writeFileSync(p, `#!/bin/sh\necho run >> ${log}\necho "2.1.100 (Claude Code)"\n`);
    expect(await Promise.all([cliVersion(p), cliVersion(p)])).toEqual(["2.1.100", "2.1.100"]);
    expect(await cliVersion(p)).toBe("2.1.100");
    expect(readFileSync(log, "utf8")).toBe("run\n");
    writeFileSync(p, `#!/bin/sh\necho run >> ${log}\necho "2.1.331 (Claude Code)"\n`);
    utimesSync(p, new Date(), new Date(Date.now() + 5000));
    expect(await cliVersion(p)).toBe("2.1.331");
    expect(readFileSync(log, "utf8")).toBe("run\nrun\n");
  });
});

describe("config: the server's default permission mode and the auto-updater", () => {
  it('defaults to "default", takes any mode of the list, refuses others; autoupdate off unless allowed', () => {
    expect(loadConfig({}).defaultPermissionMode).toBe("default");
    expect(loadConfig({ CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE: "acceptEdits" }).defaultPermissionMode).toBe("acceptEdits");
    expect(() => loadConfig({ CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE: "yolo" })).toThrow(
      /CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE must be one of default, acceptEdits/,
    );
    expect(loadConfig({}).allowAutoupdate).toBe(false);
    expect(loadConfig({ CLAUDE_SESSIONS_ALLOW_AUTOUPDATE: "1" }).allowAutoupdate).toBe(true);
  });
});

describe("launches: an explicit mode, the version, no auto-updater", () => {
  it("a start without permission_mode runs --permission-mode=default, records it and the version, and the child has DISABLE_AUTOUPDATER=1", async () => {
    const s = await f.svc.start(f.startIn());
    expect(modeArgs(s.session_id)).toEqual(["--permission-mode=default"]);
    expect(f.fake.sessions.get(s.session_id)!.spec.env.DISABLE_AUTOUPDATER).toBe("1");
    // The fake claude says 2.1.330: in range, no warnings.
    expect(s).toMatchObject({ permission_mode: "default", claude_version: "2.1.330" });
    expect(s.warnings).toBeUndefined();
    const l = await f.svc.list(api.listInput.parse({}));
    expect(l.sessions[0]).toMatchObject({ session_id: s.session_id, permission_mode: "default", claude_version: "2.1.330" });
    // The record's options (what a headless plan hands the engine) carry the same mode to the SDK's permissionMode.
    const options = (await f.store.get(s.session_id))!.options;
    expect(options.permission_mode).toBe("default");
    expect(
      buildSdkOptions({
        ...headlessOptionsOf(options),
        cwd: f.root,
        claude_path: "/x/claude",
        events_path: "/x/e",
        settings_path: "/x/s",
      }).options.permissionMode,
    ).toBe("default");
  });

  it("the operator's default is used when none is asked for; an asked mode wins; resume keeps the recorded mode", async () => {
    f.svc.deps.cfg.defaultPermissionMode = "acceptEdits";
    const a = await f.svc.start(f.startIn());
    const b = await f.svc.start(f.startIn({ permission_mode: "plan" }));
    expect(modeArgs(a.session_id)).toEqual(["--permission-mode=acceptEdits"]);
    expect(modeArgs(b.session_id)).toEqual(["--permission-mode=plan"]);
    // The default changes; the sessions resumed keep what they were started with.
    f.svc.deps.cfg.defaultPermissionMode = "default";
    for (const s of [a, b]) await f.svc.kill(api.killInput.parse({ session_id: s.session_id }));
    // The ended sessions' followers are released (30 ms in the fixture) before they are resumed.
    await until(async () => f.svc.followed === 0, 5000, 10);
    const ra = await f.svc.resume(api.resumeInput.parse({ session_id: a.session_id }));
    const rb = await f.svc.resume(api.resumeInput.parse({ session_id: b.session_id }));
    expect(modeArgs(a.session_id)).toEqual(["--permission-mode=acceptEdits"]);
    expect(argvOf(a.session_id)[0]).toBe(f.svc.deps.cfg.claudePath);
    expect(modeArgs(b.session_id)).toEqual(["--permission-mode=plan"]);
    // The options a headless spawn reads carry it too.
    expect((await f.store.get(a.session_id))!.options.permission_mode).toBe("acceptEdits");
    expect(ra).toMatchObject({ permission_mode: "acceptEdits", claude_version: "2.1.330" });
    expect(rb.permission_mode).toBe("plan");
    expect(f.fake.sessions.get(b.session_id)!.spec.env.DISABLE_AUTOUPDATER).toBe("1");
  });

  it("a session recorded without a mode (an older server's) resumes with the server's default", async () => {
    const s = await f.svc.start(f.startIn({ permission_mode: "plan" }));
    await f.svc.kill(api.killInput.parse({ session_id: s.session_id }));
    await until(async () => f.svc.followed === 0, 5000, 10);
    await f.store.patch(s.session_id, (r) => {
      delete r.options.permission_mode;
      delete r.permission_mode;
    });
    const r = await f.svc.resume(api.resumeInput.parse({ session_id: s.session_id }));
    expect(modeArgs(s.session_id)).toEqual(["--permission-mode=default"]);
    expect(r.permission_mode).toBe("default");
  });

  it("a default of bypassPermissions still needs the bypass gate: refused, nothing spawned", async () => {
    f.svc.deps.cfg.defaultPermissionMode = "bypassPermissions";
    await expect(f.svc.start(f.startIn())).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(f.fake.sessions.size).toBe(0);
  });

  it("CLAUDE_SESSIONS_ALLOW_AUTOUPDATE leaves the child's auto-updater alone", async () => {
    f.svc.deps.cfg.allowAutoupdate = true;
    const s = await f.svc.start(f.startIn());
    expect(f.fake.sessions.get(s.session_id)!.spec.env.DISABLE_AUTOUPDATER).toBe(process.env.DISABLE_AUTOUPDATER);
  });

  it("a CLI outside the tested range starts, with a warning in the result; health_check says warn, overall ok", async () => {
    f.svc.deps.cfg.claudePath = cliReporting("2.1.999");
    const s = await f.svc.start(f.startIn());
    expect(s.status).toBe("ready");
    expect(s.claude_version).toBe("2.1.999");
    expect(s.warnings).toEqual([expect.stringMatching(/claude 2\.1\.999 is newer than the newest version checked/)]);
    const h = await healthChecks({ cfg: f.svc.deps.cfg, version: "test", store: f.store });
    expect(h.checks.find((c) => c.name === "claude_version")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/2\.1\.999 is newer/),
    });
    expect(h.checks.find((c) => c.name === "session_cli_versions")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(`2.1.999: ${s.session_id}`),
    });
    expect(h.checks.find((c) => c.name === "claude")?.detail).toContain("(2.1.999)");
    // warn is not degraded: the overall status comes from the other checks only.
    const others = h.checks.filter((c) => c.status !== "warn");
    expect(h.status).toBe(
      others.some((c) => c.status === "down") ? "down" : others.some((c) => c.status === "degraded") ? "degraded" : "ok",
    );
  });
});
