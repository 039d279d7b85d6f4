/**
 * Screen text is the fallback signal; these run on real screens of the CLI (tests/fixtures/screens, copied from the
 * measured samples of 2.1.197).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pastePieces } from "../../src/drivers/terminal/prompt.js";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";
import { detectBlockingScreen, inputText, menuMoves, permissionDigit, showsInterrupted, showsStoppedTurn } from "../../src/drivers/terminal/screens.js";

const SAMPLES = join(import.meta.dirname, "..", "fixtures", "screens");
const sample = (name: string) => readFileSync(join(SAMPLES, name), "utf8");
const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({ hook_event_name, ...extra });

describe("screens of the real CLI (2.1.197 samples)", () => {
  it("busy, idle, interrupted and the permission dialog are told apart", () => {
    expect(showsStoppedTurn(sample("busy.txt"))).toBe(false);
    expect(showsInterrupted(sample("busy.txt"))).toBe(false);
    expect(showsInterrupted(sample("after-esc.txt"))).toBe(true);
    expect(showsStoppedTurn(sample("permission-prompt.txt"))).toBe(false);
    expect(inputText(sample("idle-after-reply.txt"))).toBe("");
    expect(inputText(sample("idle-start.txt"))).toBe("");
    expect(detectBlockingScreen(sample("idle-start.txt"))).toBeUndefined();
  });

  it("reads the permission dialog's digits from its labels", () => {
    const s = sample("permission-prompt.txt");
    expect(permissionDigit(s, "allow")).toBe("1");
    expect(permissionDigit(s, "allow_always")).toBe("2");
    expect(permissionDigit(s, "deny")).toBe("3");
  });
});

describe("screen helpers", () => {
  it("2.1.330's dialog puts No at 4", () => {
    const s = ["Do you want to proceed?", "❯ 1. Yes", "  2. Yes, and always allow access to work/ from this project", "  3. Yes, and switch to auto mode", "  4. No", ""].join("\n");
    expect(permissionDigit(s, "deny")).toBe("4");
    expect(permissionDigit(s, "allow")).toBe("1");
    expect(permissionDigit("no dialog here", "deny")).toBeUndefined();
  });

  it("moves a menu cursor onto the wanted option in either order", () => {
    const v330 = ["Do you trust the files in this folder?", "", " ❯ No, exit", "   Yes, I trust this folder"].join("\n");
    const v197 = [" ❯ 1. Yes, I trust this folder", "   2. No, exit"].join("\n");
    expect(menuMoves(v330, /Yes, I trust this folder/)).toBe(1);
    expect(menuMoves(v197, /Yes, I trust this folder/)).toBe(0);
    expect(menuMoves("nothing", /Yes/)).toBeUndefined();
    expect(detectBlockingScreen(v330)).toBe("trust");
  });

  it("a prompt put back into the input box after Esc reads as a stopped turn", () => {
    const rule = "─".repeat(60);
    const restored = ["❯ long job", "", rule, "❯\u00a0long job", rule, "  ? for shortcuts"].join("\n");
    expect(inputText(restored)).toBe("long job");
    expect(showsStoppedTurn(restored)).toBe(true);
    const stillBusy = ["✶ Waddling… (3s · ↓ 4 tokens)", rule, "❯ typed ahead", rule, "  ? for shortcuts"].join("\n");
    expect(showsStoppedTurn(stillBusy)).toBe(false);
  });

  it("pastes in pieces of at most 700 characters and 2 newlines, losing nothing", () => {
    const text = "line one\nline two\nline three\n" + "é".repeat(1500) + "\n🙂 end";
    const pieces = pastePieces(text);
    expect(pieces.join("")).toBe(text);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(700);
      expect((p.match(/\n/g) ?? []).length).toBeLessThanOrEqual(2);
    }
    expect(pastePieces("short")).toEqual(["short"]);
  });

  it("cs:answered moves an allowed dialog back to busy, only for the request it answers", () => {
    const base = [ev("cs:spawn"), ev("SessionStart"), ev("UserPromptSubmit"), ev("PermissionRequest", { tool_name: "Bash" })];
    const pending = foldAll(base);
    const seq = pending.pending_permission!.seq;
    expect(foldAll([ev("cs:answered", { permission_seq: seq + 7 })], pending).status).toBe("waiting_for_permission");
    expect(foldAll([ev("cs:answered", { permission_seq: seq })], pending)).toMatchObject({ status: "busy" });
  });
});
