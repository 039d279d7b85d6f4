/**
 * Screen text is the fallback signal; these run on real screens of the CLI (tests/fixtures/screens, copied from the
 * measured samples of 2.1.197).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pastePieces } from "../../src/runners/terminal/screen/prompt.js";
import { foldAll, type LogEvent } from "../../src/events/reducer.js";
import { classifyScreen, pickChoice, unknownScreen } from "../../src/runners/terminal/screen/blocking.js";
import {
  detectBlockingScreen,
  inputText,
  menuMoves,
  permissionDigit,
  showsInterrupted,
  showsInterruptedTurn,
  showsStoppedTurn,
} from "../../src/runners/terminal/screen/screens.js";

const SAMPLES = join(import.meta.dirname, "..", "fixtures", "screens");
const sample = (name: string) => readFileSync(join(SAMPLES, name), "utf8");
const ev = (hook_event_name: LogEvent["hook_event_name"], extra: Partial<LogEvent> = {}): LogEvent => ({
  hook_event_name,
  ...extra,
});

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
    const s = [
      "Do you want to proceed?",
      "❯ 1. Yes",
      "  2. Yes, and always allow access to work/ from this project",
      "  3. Yes, and switch to auto mode",
      "  4. No",
      "",
    ].join("\n");
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

describe("blocking screens (issue 20): each sample is recognised with its choices", () => {
  const cases: Array<[string, string, string[]]> = [
    [
      "auto-mode-cant-check.2.1.331.txt",
      "auto_mode_unavailable",
      ["stay in auto mode", "leave for accept edits mode and stop", "cancel"],
    ],
    ["trust.2.1.331.txt", "trust", ["No, exit", "Yes, I trust this folder"]],
    [
      "mcp-server.2.1.331.txt",
      "mcp_server",
      ["Use this MCP server", "Use this and all future MCP servers in this project", "Continue without using this MCP server"],
    ],
    ["plan-exit.2.1.331.txt", "plan_approval", ["Yes, and switch to default (ask each time) for this session", "No"]],
    [
      "plan-proceed.from-strings.2.1.331.txt",
      "plan_approval",
      ["Yes, and use auto mode", "Yes, and switch to default (ask each time)", "No, keep planning"],
    ],
    ["question.2.1.330.txt", "question", ["Red", "Blue", "Type something.", "Chat about this"]],
    [
      "usage-limit.from-strings.2.1.331.txt",
      "usage_limit",
      [
        "Stop and wait for limit to reset",
        "Wait here, then continue automatically at 3pm",
        "Switch to Sonnet and continue",
        "Upgrade your plan",
      ],
    ],
  ];
  for (const [file, kind, labels] of cases) {
    it(`${file} → ${kind}`, () => {
      const p = classifyScreen(sample(file));
      expect(p?.kind).toBe(kind);
      expect(p?.choices.map((c) => c.label)).toEqual(labels);
      expect(p!.text.length).toBeGreaterThan(10);
    });
  }

  it("start-up screens: the MCP approval and the trust screen of 2.1.331 are recognised before SessionStart", () => {
    expect(detectBlockingScreen(sample("mcp-server.2.1.331.txt"))).toBe("mcp_server");
    expect(detectBlockingScreen(sample("trust.2.1.331.txt"))).toBe("trust");
  });

  it("the auto-mode screen's choices are its footer's keys; its text names the problem", () => {
    const p = classifyScreen(sample("auto-mode-cant-check.2.1.331.txt"))!;
    expect(p.choices.map((c) => c.keys)).toEqual([["Enter"], ["BTab"], ["Escape"]]);
    expect(p.text).toMatch(/^Auto mode can't check actions in this session/);
    expect(p.text).toMatch(/Enter to stay in auto mode/);
  });

  it("the end of an interrupted turn is seen however far above the input box it is (2.1.330's tall pane)", () => {
    const rule = "─".repeat(60);
    const far = [
      "❯ MOCK_BASH:touch x",
      "● MOCK: running a command.",
      "  ⎿  Interrupted · What should Claude do instead?",
      "● Auto mode lets Claude …",
      ...Array(35).fill(""),
      rule,
      "❯ ",
      rule,
      "  ⏵⏵ auto mode on",
    ].join("\n");
    expect(showsInterrupted(far)).toBe(false);
    expect(showsInterruptedTurn(far)).toBe(true);
    const next = far.replace("● Auto mode lets Claude …", "❯ the next prompt\n✶ Waddling… (1s)");
    expect(showsInterruptedTurn(next)).toBe(false);
    const answered = far.replace("● Auto mode lets Claude …", "❯ the next prompt\n● MOCK REPLY: the next prompt");
    expect(showsInterruptedTurn(answered)).toBe(false);
  });

  it("a numbered menu with descriptions and a rule between its rows (AskUserQuestion) is read by its numbers", () => {
    const q = classifyScreen(sample("question.2.1.330.txt"))!;
    expect(q.text).toMatch(/Which colour should the button be\?/);
    expect(pickChoice(q.choices, "blue")?.keys).toEqual(["Down", "Enter"]);
    expect(pickChoice(q.choices, 4)?.keys).toEqual(["Down", "Down", "Down", "Enter"]);
  });

  it("a menu's keys move the cursor from where it is, then Enter", () => {
    const mcp = classifyScreen(sample("mcp-server.2.1.331.txt"))!;
    expect(mcp.choices.map((c) => c.keys)).toEqual([["Up", "Up", "Enter"], ["Up", "Enter"], ["Enter"]]);
    const trust = classifyScreen(sample("trust.2.1.331.txt"))!;
    expect(pickChoice(trust.choices, "yes, i trust  this folder")?.keys).toEqual(["Down", "Enter"]);
    expect(pickChoice(trust.choices, 1)?.label).toBe("No, exit");
    expect(pickChoice(trust.choices, "2")?.label).toBe("Yes, I trust this folder");
    expect(pickChoice(trust.choices, 3)).toBeUndefined();
    expect(pickChoice(trust.choices, "rm -rf /")).toBeUndefined();
  });

  it("screens that do not hold a turn are not blocking: idle, busy, a 429 (its turn failed, or retried with a countdown), the input box", () => {
    for (const f of [
      "idle-start.txt",
      "idle-after-reply.txt",
      "busy.txt",
      "after-esc.txt",
      "rate-limit-429.2.1.331.txt",
      "rate-limit-retrying.2.1.330.txt",
    ]) {
      expect(classifyScreen(sample(f)), f).toBeUndefined();
      expect(classifyScreen(sample(f), { quietMs: 0 }), f).toBeUndefined();
    }
    expect(unknownScreen(sample("busy.txt"), false)).toBeUndefined();
    expect(
      unknownScreen(
        sample("rate-limit-retrying.2.1.330.txt"),
        inputText(sample("rate-limit-retrying.2.1.330.txt")) !== undefined,
      ),
    ).toBeUndefined();
    expect(unknownScreen(sample("idle-start.txt"), true)).toBeUndefined();
  });

  it("a permission dialog whose hook did not fire is reported only after 2 s without a hook (its hook may be on its way)", () => {
    expect(classifyScreen(sample("permission-prompt.txt"), { quietMs: 0 })).toBeUndefined();
    expect(classifyScreen(sample("permission-prompt.txt"), { quietMs: 1999 })).toBeUndefined();
    const p = classifyScreen(sample("permission-prompt.txt"), { quietMs: 2000 })!;
    expect(p.kind).toBe("permission_dialog");
    expect(p.choices.map((c) => c.label)).toEqual(["Yes", "Yes, and always allow access to work/ from this project", "No"]);
  });

  it("the permission dialog auto mode shows after 'stay' is a permission dialog, not the auto-mode screen (its words are in a message above)", () => {
    const s = sample("auto-mode-asks.2.1.330.txt");
    expect(classifyScreen(s, { quietMs: 0 })).toBeUndefined();
    expect(classifyScreen(s)).toMatchObject({ kind: "permission_dialog" });
    expect(classifyScreen(s)!.choices.map((c) => c.label)).toEqual(["No", "Yes"]);
  });

  it("a screen no pattern knows is unknown, with the text and the menu it shows", () => {
    const s = sample("unknown-screen.invented.txt");
    expect(classifyScreen(s)).toBeUndefined();
    const u = unknownScreen(s, false)!;
    expect(u.kind).toBe("unknown");
    expect(u.text).toMatch(/A brand-new question this server has never seen/);
    expect(u.choices.map((c) => c.label)).toEqual(["Go ahead", "Stop here"]);
  });
});
