/**
 * Issue 35: a member's call goes through server/call.ts like any tool call. Its tool's authorize step checks the
 * member's secret and role before the arguments are read (a non-lead's lead tool is PERMISSION_DENIED whatever its
 * arguments), and the one audit writer (AuditLog.record) leaves a line for every member call, reads included.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { handleMember } from "../../src/server/member/handler.js";
import { readAudit } from "../../src/store/audit.js";
import { fakeService } from "../helpers/fake-service.js";
import { until } from "../helpers/wait.js";

const f = fakeService();
const SECRET = "s".repeat(43);

/** A team session whose member secret is SECRET (its hash where the launch put the real one's). */
async function teammate(name: string, lead = false): Promise<string> {
  const s = await f.svc.start(f.startIn({ team_name: "alpha", teammate_name: name, ...(lead ? { team_lead: true } : {}) }));
  writeFileSync(
    join(f.svc.deps.cfg.stateDir, s.session_id, "member.sha256"),
    createHash("sha256").update(SECRET).digest("hex") + "\n",
  );
  return s.session_id;
}

describe("member calls through server/call.ts (issue 35)", () => {
  it("authorizes before reading the arguments: a non-lead's lead tool is refused, bad arguments or not", async () => {
    const b = await teammate("b");
    const bad = await handleMember(f.svc, {
      session_id: b,
      secret: SECRET,
      tool: "start_teammate",
      arguments: { cwd: 42, surely_not: 1 },
    });
    expect(bad).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    expect((bad as { error: { message: string } }).error.message).toContain("is the team lead's");
    // A forged secret is refused before anything else too.
    expect(
      await handleMember(f.svc, { session_id: b, secret: "x".repeat(43), tool: "list_teammates", arguments: {} }),
    ).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED" } });
    // The member's own tool with bad arguments: INVALID_ARGUMENT from the same validation as every tool.
    const invalid = await handleMember(f.svc, { session_id: b, secret: SECRET, tool: "read_handoffs", arguments: { limit: 0 } });
    expect(invalid).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENT" } });
    expect((invalid as { error: { message: string } }).error.message).toMatch(/^invalid arguments for read_handoffs: limit/);
  });

  it("answers a member's read and leaves one audit line per call, with the member as actor and no secret", async () => {
    const a = await teammate("a", true);
    const listed = await handleMember(f.svc, { session_id: a, secret: SECRET, tool: "list_teammates", arguments: {} });
    expect(listed).toMatchObject({ ok: true, result: { team_name: "alpha", you: "a" } });
    await handleMember(f.svc, { session_id: a, secret: "y".repeat(43), tool: "read_handoffs", arguments: {} });
    const lines = await until(async () => {
      const l = (await readAudit(f.svc.deps.cfg.stateDir)).filter((x) => x.actor === `member:${a}`);
      return l.length >= 2 && l;
    }, 5000);
    expect(lines).toEqual([
      expect.objectContaining({ tool: "list_teammates", session_id: a, outcome: "ok" }),
      expect.objectContaining({ tool: "read_handoffs", session_id: a, outcome: "error", error_code: "PERMISSION_DENIED" }),
    ]);
    expect(readFileSync(join(f.svc.deps.cfg.stateDir, "audit.jsonl"), "utf8")).not.toContain(SECRET);
  });
});
