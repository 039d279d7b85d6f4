/**
 * The tmux control client (runners/terminal/tmux/control.ts, issue 38): the paste, the keys and the screen reads go
 * through one long-lived `tmux -C` client instead of a tmux process each, on real tmux (private socket). What a user
 * would check: the pane gets the same bytes and the screen reads the same text as with a tmux process per call (also
 * when the pane prints lines that look like the protocol's), no tmux process per call, nothing left in the files'
 * folder, a gone session is an error as before, and calls go on when the session the client attached to ends or
 * when no tmux server runs.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TmuxHost } from "../../src/runners/terminal/tmux/tmux.js";
import { TmuxControl } from "../../src/runners/terminal/tmux/control.js";
import { installScripts } from "../../src/app.js";
import { hasTmux, until } from "../helpers/harness.js";

const root = mkdtempSync(join(tmpdir(), "cs-tmuxctl-"));
const socket = `cs-test-ctl-${process.pid}`;
const calls = join(root, "tmux-calls.log");
const io = join(root, "tmux-io");
let viaControl: TmuxHost;
let viaProcess: TmuxHost;
const tmuxOk = hasTmux();

beforeAll(async () => {
  if (!tmuxOk) return;
  const scripts = await installScripts(join(root, "state"));
  // Every tmux process this server starts writes one line here first (the control client is one of them).
  const wrapper = join(root, "tmux-wrapper.sh");
  writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> '${calls}'\nexec tmux "$@"\n`);
  chmodSync(wrapper, 0o755);
  const common = { socketName: socket, hookScript: scripts.hook, launchScript: scripts.launch, tmuxPath: wrapper };
  viaControl = new TmuxHost({ ...common, controlDir: io });
  viaProcess = new TmuxHost(common);
});
afterAll(async () => {
  await viaControl?.close();
  spawnSync("tmux", ["-L", socket, "kill-server"]);
  rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** A pane that asks for bracketed paste and shows every byte it is given (cat -v: ESC as ^[), line by line. */
async function echoSession(id: string, lines: string[] = []): Promise<void> {
  mkdirSync(join(root, id), { recursive: true });
  await viaProcess.remove(id).catch(() => {}); // a retry starts afresh
  const script = `${lines.map((l) => `echo '${l}'; `).join("")}printf '\\033[?2004h'; exec cat -v`;
  await viaProcess.spawn({
    id,
    dir: join(root, id),
    argv: ["sh", "-c", script],
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    cols: 120,
    rows: 20,
    rawLogPath: join(root, `${id}.log`),
    eventsPath: join(root, `${id}.jsonl`),
  });
}
const processCalls = () => (existsSync(calls) ? readFileSync(calls, "utf8").split("\n").filter(Boolean) : []);

describe.runIf(tmuxOk)("tmux control client", () => {
  it("pastes and presses keys as a tmux process would, and reads the same screen, with one tmux process for all of it", async () => {
    await echoSession("ctla");
    await echoSession("ctlb");
    await until(async () => (await viaProcess.screen("ctla")).length > 0);
    const before = processCalls().length;
    for (const [host, id] of [
      [viaControl, "ctla"],
      [viaProcess, "ctlb"],
    ] as const) {
      await host.paste(id, "hello; $(id) #{pane_id} 'q'");
      await host.keys(id, ["Enter"]);
    }
    const pasted = "^[[200~hello; $(id) #{pane_id} 'q'^[[201~";
    const shows = (id: string, text: string) =>
      until(async () => {
        const sc = await viaProcess.screen(id);
        return sc.includes(text) ? sc : undefined;
      });
    // The same bytes reached both panes: the same screen, read the same through the client.
    const screenA = await shows("ctla", pasted);
    expect(screenA).toBe(await shows("ctlb", pasted));
    expect(await viaControl.screen("ctla")).toBe(screenA);
    expect(await viaControl.screen("ctla", { above: 30 })).toBe(await viaProcess.screen("ctla", { above: 30 }));
    // viaControl started one client (`-C attach-session`) for its calls; viaProcess a tmux process per call.
    const started = processCalls().slice(before);
    expect(started.filter((c) => c.includes(" -C "))).toHaveLength(1);
    expect(started.filter((c) => c.includes("paste-buffer") || c.includes("send-keys"))).toHaveLength(2);
    const mark = processCalls().length;
    for (let i = 0; i < 10; i++) {
      await viaControl.paste("ctla", `line ${i}`);
      await viaControl.keys("ctla", ["Enter"]);
      await viaControl.screen("ctla", { above: 5 });
    }
    await until(async () => ((await viaControl.screen("ctla")).includes("^[[200~line 9^[[201~") ? true : undefined));
    expect(processCalls().slice(mark)).toEqual([]);
    expect(readdirSync(io)).toEqual([]);
  });

  it("a pane that prints the protocol's own lines is read whole, as a tmux process reads it", async () => {
    const fake = ["%end 1795877457 3 1", "%error 1795877457 4 1", "%begin 1795877457 5 1", "%exit", "ünïcode ✓ after"];
    await echoSession("ctlc", fake);
    const whole = await until(async () => {
      const sc = await viaProcess.screen("ctlc");
      return sc.includes("after") ? sc : undefined;
    });
    for (const l of fake) expect(whole).toContain(l);
    for (let i = 0; i < 5; i++) expect(await viaControl.screen("ctlc")).toBe(whole);
    expect(await viaControl.screen("ctlc", { above: 100 })).toBe(await viaProcess.screen("ctlc", { above: 100 }));
  });

  it("a read ends at its frame, not at a pane's line that carries the read's own block number", async () => {
    const spoofed = new TmuxControl(
      join(import.meta.dirname, "../fixtures/spoofing-tmux.mjs"),
      [],
      { PATH: process.env.PATH ?? "" },
      io,
    );
    const t = 1795877457;
    for (let i = 0; i < 3; i++) {
      const num = 101 + 3 * i; // a read is two commands (the capture, its frame), the keys one
      expect(await spoofed.screen("cs-x", 0)).toBe(
        ["top", `%end ${t} ${num} 1`, `%error ${t} ${num} 1`, `%begin ${t} ${num + 1} 1`, "bottom"].map((l) => `${l}\n`).join(""),
      );
      expect(await spoofed.keys("cs-x", ["Enter"])).toBe(true);
    }
    spoofed.close();
  });

  it("goes on when the session it attached to ends, and says a gone session is gone", async () => {
    await echoSession("ctld");
    await until(async () => (await viaProcess.screen("ctld")).length > 0);
    for (const id of ["ctla", "ctlb", "ctlc"]) await viaProcess.remove(id);
    // The first call may find the client just gone (it then runs tmux itself); the calls after it go through a new one.
    await viaControl.paste("ctld", "still here");
    await until(async () => ((await viaProcess.screen("ctld")).includes("still here") ? true : undefined));
    const before = processCalls().length;
    for (let i = 0; i < 5; i++) await viaControl.keys("ctld", ["Enter"]);
    await viaControl.paste("ctld", "and here");
    await viaControl.screen("ctld");
    expect(
      processCalls()
        .slice(before)
        .filter((c) => !c.includes(" -C ")),
    ).toEqual([]);
    await until(async () => ((await viaProcess.screen("ctld")).includes("and here") ? true : undefined));
    // A session that is gone: an error, as from a tmux process.
    await expect(viaControl.keys("ctla", ["Enter"])).rejects.toMatchObject({ code: "PROCESS_ERROR" });
    await expect(viaControl.paste("ctla", "x")).rejects.toMatchObject({ code: "PROCESS_ERROR" });
    await expect(viaControl.screen("ctla")).rejects.toMatchObject({ code: "SESSION_DEAD" });
    expect(readdirSync(io)).toEqual([]);
  });

  it("with no tmux server, or words it cannot carry, it answers nothing and the caller runs tmux itself", async () => {
    const none = new TmuxControl("tmux", ["-L", `${socket}-none`], { PATH: process.env.PATH ?? "" }, join(root, "io2"));
    expect(await none.keys("cs-x", ["Enter"])).toBeUndefined();
    expect(await none.paste("cs-x", "x")).toBeUndefined();
    expect(await none.screen("cs-x", 0)).toBeUndefined();
    none.close();
    const spaced = new TmuxControl("tmux", ["-L", socket], { PATH: process.env.PATH ?? "" }, join(root, "io dir"));
    expect(await spaced.paste("cs-ctld", "x")).toBeUndefined();
    expect(await spaced.run("cs-ctld", [["send-keys", "-t", "=cs-ctld:", "a;b"]])).toBeUndefined();
    spaced.close();
  });
});
