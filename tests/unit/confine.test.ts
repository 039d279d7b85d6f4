/** Issue #19's pure parts: secret file names, the redacted record, the settings' deny rules. */
import { describe, expect, it } from "vitest";
import { stateDenyRules } from "../../src/claude/hooks.js";
import { redactRecord } from "../../src/sessions/list.js";
import { newRecord } from "../../src/store/schema.js";
import { isSecretPath } from "../../src/util/fs/secret-files.js";

describe("issue #19 pure parts", () => {
  it("secret file names, by base name or a folder on the way; ordinary files are not", () => {
    for (const p of [
      ".env",
      "a/.env.production",
      "prod.env",
      ".envrc",
      "secrets.yaml",
      "Secret.txt",
      "credentials",
      ".aws/config",
      "x/.ssh/known_hosts",
      "id_ed25519.pub",
      "server.PEM",
      "tls.key",
      ".netrc",
      ".npmrc",
      "main.tfvars",
    ]) {
      expect(isSecretPath(p), p).toBe(true);
    }
    for (const p of ["a.txt", "src/env.ts", "environment.md", "keys.ts", "README.md", "docs/secretary/x.md", "monkey.json"]) {
      expect(isSecretPath(p), p).toBe(false);
    }
  });

  it("include_metadata without include_sensitive: no argv, env names or system prompts", () => {
    const r = newRecord({
      session_id: "s1",
      claude_session_id: "c",
      backend: "headless",
      status: "idle",
      created_at: "2026-01-01T00:00:00.000Z",
      cwd: "/w",
    });
    r.options = { append_system_prompt: "APPEND", system_prompt: "SYSTEM", model: "m" };
    r.args = ["--append-system-prompt=APPEND"];
    const out = JSON.stringify(redactRecord(r, false));
    expect(out).not.toMatch(/APPEND|SYSTEM/);
    expect(out).toContain('"model":"m"');
    expect(JSON.stringify(redactRecord(r, true))).toContain("SYSTEM");
  });

  it("the deny rules name the state directory as an absolute path, with glob characters escaped", () => {
    expect(stateDenyRules("/st/id/events.jsonl")).toEqual([
      "Edit(//st/*.*)",
      "Edit(//st/token)",
      "Edit(//st/bin/**)",
      "Edit(//st/compile-cache/**)",
      "Edit(//st/*/*.*)",
      "Edit(//st/*/decisions/**)",
      "Read(//st/token)",
    ]);
    expect(stateDenyRules("/a[1]*/id/events.jsonl")[1]).toBe("Edit(//a\\[1\\]\\*/token)");
  });
});
