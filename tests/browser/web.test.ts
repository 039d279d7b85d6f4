/**
 * The web view in a real browser (issue #15): headless Chromium from the OS packages driven by playwright-core,
 * against the built server as `serve --http`, real tmux on a private socket and the fake claude.
 * CS_SCREENSHOTS=1 also copies the screenshots into docs/screenshots/ (README.md and docs/web.md show them).
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorld, ROOT, tmuxOrSkip, until, type World } from "../helpers/harness.js";
import { chromiumPath, launchChromium } from "../helpers/browser.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";
import { connectMember } from "../helpers/members.js";

const CHROMIUM = tmuxOrSkip() ? chromiumPath() : undefined;

describe.runIf(CHROMIUM)("the web view in Chromium", () => {
  let w: World;
  let srv: HttpServerProc;
  let mcp: HttpMcp;
  let browser: Browser;
  let page: Page;
  let one: string;
  let two: string;
  let formId: string;
  const shots: string[] = [];

  const row = (id: string) => page.locator(`tr[data-id="${id}"]`);
  const shot = async (name: string, fullPage = false) => {
    const file = join(w.root, `${name}.png`);
    await page.screenshot({ path: file, fullPage });
    shots.push(file);
  };

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    // The page may start sessions in the world's work directory only (CLAUDE_SESSIONS_WEB_ROOTS).
    srv = await startHttpServer(w, { CLAUDE_SESSIONS_WEB_ROOTS: w.work });
    mcp = await connectHttp(srv.url, srv.token);
    one = (await mcp.callOk("start_session", { cwd: w.dir("api-server"), team_name: "backend", teammate_name: "alice" }))
      .session_id;
    two = (await mcp.callOk("start_session", { cwd: w.dir("web-client"), team_name: "frontend", teammate_name: "bob" }))
      .session_id;
    browser = await launchChromium(CHROMIUM!, w.home);
    // Notifications allowed, as a person who clicked "Notify me" and said yes; each one the page raises is recorded.
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, permissions: ["notifications"] });
    await context.addInitScript(`{
      const Real = window.Notification;
      const seen = (window.__notes = []);
      class Recorded extends Real {
        constructor(title, o) {
          super(title, o);
          seen.push(title);
        }
      }
      Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
      window.Notification = Recorded;
    }`);
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    if (process.env.CS_SCREENSHOTS === "1" && shots.length) {
      mkdirSync(join(ROOT, "docs", "screenshots"), { recursive: true });
      for (const f of shots) copyFileSync(f, join(ROOT, "docs", "screenshots", f.split("/").pop()!));
    }
    await browser?.close();
    await mcp?.close().catch(() => {});
    await srv?.stop();
    w?.cleanup();
  });

  it("signs in with the token once and lists both sessions live", async () => {
    await page.goto(`${srv.url}/`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill("#token", "not the token");
    await page.click("button[type=submit]");
    await page.waitForURL(/failed/);
    await page.fill("#token", srv.token);
    await page.click("button[type=submit]");
    await page.waitForSelector(`tr[data-id="${one}"]`);
    await page.waitForSelector(`tr[data-id="${two}"]`);
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === "cs_session")).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    expect(await row(one).locator("td.team").textContent()).toBe("backend / alice");
    expect(await row(one).locator("td.cwd").textContent()).toBe(join(w.work, "api-server"));
    expect(await row(one).locator("td.backend").textContent()).toBe("tmux");
    // A turn driven by another client shows up in the row without a reload.
    await mcp.callOk("send_message", { session_id: one, message: "hello from the api" });
    await until(async () => (await row(one).getAttribute("data-turns")) === "1", 10_000);
    // Its cost column fills once the turn's usage is read: the session's total, as list_sessions has it.
    await until(async () => (await row(one).locator("td.cost").textContent())?.startsWith("$"), 10_000);
    const totals = await mcp.callOk("list_sessions", {});
    const cost = totals.sessions.find((s) => s.session_id === one)?.total_cost_usd;
    expect(cost).toBeGreaterThan(0);
    expect(await row(one).locator("td.cost").textContent()).toBe(`$${cost!.toFixed(4)}`);
    // A session that needs an answer stands out.
    await mcp.callOk("send_message", { session_id: two, message: "FAKE_BASH:echo waiting", wait_for_response: false });
    await until(async () => (await row(two).getAttribute("class"))?.includes("needs-answer"), 10_000);
    expect(await row(two).getAttribute("data-status")).toBe("waiting_for_permission");
    await shot("list");
  }, 60_000);

  it("shows a session's live terminal and transcript, answers its permission, takes a prompt, and kills it", async () => {
    await row(two).click();
    await page.waitForSelector("#session-view:not([hidden])");
    // The pending permission, with its tool and input.
    await page.waitForSelector("#permission:not([hidden])");
    expect(await page.textContent("#p-tool")).toBe("Bash");
    expect(await page.textContent("#p-input")).toContain("echo waiting");
    await until(async () => (await page.textContent("#terminal .xterm-rows"))?.includes("echo waiting"), 10_000);
    await shot("session-permission");
    await page.click('#permission button[data-decision="allow"]');
    await page.waitForSelector("#permission", { state: "hidden" });
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE: ran echo waiting"), 10_000);
    // A prompt typed into the page: the reply appears in the terminal and in the transcript.
    await page.fill("#message", "hello from the page");
    await page.click("#send button[type=submit]");
    await until(
      async () => (await page.textContent("#terminal .xterm-rows"))?.includes("FAKE REPLY: hello from the page"),
      10_000,
    );
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: hello from the page"), 10_000);
    // The box empties once the page's POST returns (on a loaded machine, possibly after the reply showed).
    await until(async () => (await page.inputValue("#message")) === "", 10_000);
    await until(async () => (await page.textContent("#s-status")) === "idle", 10_000);
    await shot("session", true);
    // The page's prompts meet send_message's validation: bash mode is refused, nothing is typed.
    await page.fill("#message", "!rm -rf /");
    await page.click("#send button[type=submit]");
    await until(async () => (await page.textContent("#error"))?.length, 10_000);
    expect(await page.textContent("#error")).toMatch(/!/);
    await page.fill("#message", "");
    // Kill, confirmed in the browser's dialog.
    page.once("dialog", (d) => void d.accept());
    await page.click("#kill");
    await until(async () => (await page.textContent("#s-status")) === "dead", 15_000);
    // list_sessions agrees (on a loaded machine it may say zombie for a moment while the last process exits).
    const status = async () => (await mcp.callOk("list_sessions", {})).sessions.find((s) => s.session_id === two)?.status;
    await until(async () => (await status()) === "dead", 15_000).catch(async () => expect(await status()).toBe("dead"));
  }, 60_000);

  it("starts a session from the form, in an allowed folder only, and shows its answer", async () => {
    await page.goto(`${srv.url}/#/new`);
    await page.waitForSelector("#start-view:not([hidden])");
    // The allowed root and the recent folders of sessions are offered.
    await until(async () => (await page.locator("#cwd-options option").count()) >= 3, 10_000);
    const offered = await page.$$eval("#cwd-options option", (os) => os.map((o) => (o as unknown as { value: string }).value));
    expect(offered).toEqual(expect.arrayContaining([w.work, join(w.work, "api-server"), join(w.work, "web-client")]));
    // Outside the allowed folders: refused in words, nothing started.
    await page.fill("#f-cwd", w.home);
    await page.click("#start button[type=submit]");
    await until(async () => (await page.textContent("#start-error"))?.includes("PERMISSION_DENIED"), 10_000);
    expect(await page.textContent("#start-error")).toContain("CLAUDE_SESSIONS_WEB_ROOTS");
    const cwd = w.dir("from-the-form");
    await page.fill("#f-cwd", cwd);
    await page.fill("#f-prompt", "hello from the form");
    await page.selectOption("#f-mode", "acceptEdits");
    await page.fill("#f-team", "frontend");
    await shot("start");
    await page.click("#start button[type=submit]");
    await page.waitForURL(/#\/s\//);
    const id = decodeURIComponent(new URL(page.url()).hash.slice("#/s/".length));
    formId = id;
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: hello from the form"), 15_000);
    // The same session through MCP: started by start_session with the form's options, audited with the page as actor.
    const listed = await mcp.callOk("list_sessions", {});
    expect(listed.sessions.find((s) => s.session_id === id)).toMatchObject({
      cwd,
      permission_mode: "acceptEdits",
      team_name: "frontend",
    });
    const refused = await mcp.callOk("list_sessions", { status_filter: "all" });
    expect(refused.sessions.filter((s) => s.cwd === w.home)).toEqual([]);
  }, 60_000);

  it("raises a notification and counts in the title when a session needs you, and answers it with a key", async () => {
    // The first session finished a turn while the list was shown: it counts until it is looked at.
    const count = async () => Number(/^\((\d+)\) claude-sessions$/.exec(await page.title())?.[1] ?? 0);
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${one}"].needs-look`);
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(1);
    await page.goto(`${srv.url}/#/s/${one}`);
    await page.waitForSelector("#session-view:not([hidden])");
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${one}"]:not(.needs-look)`);
    const base = before - 1;
    expect(await count()).toBe(base);
    await mcp.callOk("send_message", { session_id: one, message: "FAKE_BASH:echo needs you", wait_for_response: false });
    await until(async () => (await count()) === base + 1, 10_000);
    const notes = (await page.evaluate("window.__notes")) as string[];
    expect(notes).toContain(`claude-sessions: ${one} waits for permission: Bash`);
    // Only the sessions that need you.
    await page.check("#needs-filter");
    expect(await row(one).isVisible()).toBe(true);
    expect(await row(two).isVisible()).toBe(false);
    await shot("needs-you");
    // n opens the next session that needs you; a allows.
    await page.evaluate("document.activeElement.blur()"); // keys typed into a field stay text
    await page.keyboard.press("n");
    await page.waitForSelector("#permission:not([hidden])");
    expect(await page.textContent("#s-id")).toBe(one);
    await page.keyboard.press("a");
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE: ran echo needs you"), 10_000);
    await until(async () => (await count()) === base, 10_000);
    await page.goto(`${srv.url}/#/`);
    await page.uncheck("#needs-filter");
  }, 60_000);

  it("resumes an ended session from its page with a prompt", async () => {
    await mcp.callOk("kill_session", { session_id: one });
    await page.goto(`${srv.url}/#/s/${one}`);
    await page.waitForSelector("#ended:not([hidden])");
    await page.fill("#message", "welcome back");
    await page.click("#resume");
    await page.waitForSelector("#ended", { state: "hidden" });
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: welcome back"), 15_000);
    const listed = await mcp.callOk("list_sessions", {});
    expect(listed.sessions.find((s) => s.session_id === one)?.status).toMatch(/^(ready|idle|busy)$/);
    // Fork the live session: the page opens the new one, which has the conversation so far.
    await until(async () => /^(ready|idle)$/.test((await page.textContent("#s-status")) ?? ""), 10_000);
    await page.fill("#message", "in the fork");
    await page.click("#fork-live");
    await page.waitForURL((u) => u.hash.startsWith("#/s/") && !u.hash.endsWith(one));
    const fork = decodeURIComponent(new URL(page.url()).hash.slice("#/s/".length));
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: in the fork"), 15_000);
    expect(await page.textContent("#transcript")).toContain("welcome back");
    await mcp.callOk("kill_session", { session_id: fork });
  }, 60_000);

  it("searches every conversation, highlights the match safely, opens the hit and resumes it", async () => {
    await mcp.callOk("send_message", { session_id: formId, message: "zebra <b>not bold</b>" });
    await mcp.callOk("kill_session", { session_id: formId });
    // The index follows the transcripts in the background: wait until the tool finds it.
    await until(async () => (await mcp.callOk("search_conversations", { query: "zebra" })).results.length > 0, 20_000);
    await page.goto(`${srv.url}/#/history`);
    await page.fill("#q", "zebra");
    await page.click("#search button[type=submit]");
    await page.waitForSelector("#hits li");
    expect(await page.$$eval("#hits mark", (ms) => ms.map((m) => m.textContent))).toContain("zebra");
    // The message's markup is text, never HTML.
    expect(await page.locator("#hits b").count()).toBe(0);
    expect(await page.textContent("#hits .snippet")).toContain("zebra <b>not bold</b>"); // the index's ** markers became the <mark>
    await shot("search");
    await page.click("#hits li a");
    await page.waitForSelector("#conversation-view:not([hidden]) .msg.hit");
    expect(await page.textContent("#c-items .msg.hit")).toContain("zebra <b>not bold</b>");
    expect(await page.textContent("#c-items")).toContain("hello from the form");
    await shot("conversation");
    await page.click("#c-resume");
    await page.waitForURL(new RegExp(`#/s/${formId}$`));
    await until(async () => /^(ready|idle)$/.test((await page.textContent("#s-status")) ?? ""), 15_000);
    await page.fill("#message", "back from the search");
    await page.click("#send button[type=submit]");
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: back from the search"), 15_000);
    // The session's turns, with what each cost.
    await until(async () => (await page.textContent("#turns tbody"))?.includes("back from the search"), 10_000);
    expect(await page.textContent("#turns tbody")).toContain("zebra");
    expect(await page.textContent("#turns tbody")).not.toContain("hello from the api"); // another session's
  }, 90_000);

  it("shows what sessions cost: per session (with budget left), per team and per day", async () => {
    const b = await mcp.callOk("start_session", { cwd: w.dir("budgeted"), max_budget_usd: 5, team_name: "backend" });
    await mcp.callOk("send_message", { session_id: b.session_id, message: "spend a little" });
    await page.goto(`${srv.url}/#/cost`);
    const costRow = page.locator(`#cost-sessions tr[data-session="${b.session_id}"]`);
    // The session's cost as list_sessions has it, once its turn's usage is recorded; the page follows it live.
    const cost = await until(async () => {
      const listed = await mcp.callOk("list_sessions", {});
      const c = listed.sessions.find((s) => s.session_id === b.session_id)?.total_cost_usd;
      return typeof c === "number" && c > 0 ? c : undefined;
    }, 15_000);
    await until(async () => (await costRow.locator("td.cost").textContent()) === `$${cost.toFixed(4)}`, 10_000);
    expect(await costRow.locator("td.budget").textContent()).toBe(`$${(5 - cost).toFixed(4)} of $5`);
    expect(await page.textContent("#cost-teams")).toContain("backend");
    const today = new Date().toISOString().slice(0, 10);
    await until(
      async () => Number(await page.locator(`#cost-chart rect[data-day="${today}"]`).getAttribute("data-cost")) > 0,
      10_000,
    );
    await shot("cost");
  }, 60_000);

  it("shows a worktree session's changes: files, diff, ahead and behind its base (read-only)", async () => {
    const repo = w.dir("repo");
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
        cwd: repo,
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: w.home },
      });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "first line\n");
    git("add", "README.md");
    git("commit", "-qm", "one");
    const s = await mcp.callOk("start_session", { cwd: repo, worktree: true });
    const wt = s.worktree!.path;
    // What Claude would do in it: a commit, an edit not committed yet, a new file.
    writeFileSync(join(wt, "lib.txt"), "library\n");
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "add", "lib.txt"], {
      cwd: wt,
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "lib"], {
      cwd: wt,
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
    appendFileSync(join(wt, "README.md"), "a <script>changed</script> line\n");
    writeFileSync(join(wt, "new.txt"), "untracked\n");
    // And main moves on.
    writeFileSync(join(repo, "other.txt"), "x\n");
    git("add", "other.txt");
    git("commit", "-qm", "two");
    await page.goto(`${srv.url}/#/s/${s.session_id}`);
    await page.waitForSelector("#review:not([hidden]) #r-files li");
    expect(await page.textContent("#r-branch")).toBeTruthy();
    expect(await page.textContent("#r-ahead")).toBe("1 ahead, 1 behind main");
    expect(await page.$$eval("#r-files li", (ls) => ls.map((l) => l.textContent))).toEqual([
      "M README.md",
      "A lib.txt",
      "? new.txt",
    ]);
    expect(await page.textContent("#r-diff")).toContain("+a <script>changed</script> line");
    expect(await page.locator("#r-diff .add").count()).toBe(2);
    await shot("review", true);
    await mcp.callOk("kill_session", { session_id: s.session_id });
  }, 60_000);

  it("merges a worktree session from its review page; a conflicting one says so and leaves main unchanged (issue 34)", async () => {
    const repo = w.dir("merge-repo");
    const env = { PATH: process.env.PATH ?? "", HOME: w.home };
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", env });
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "first line\n");
    git(repo, "add", "README.md");
    git(repo, "commit", "-qm", "one");
    const a = await mcp.callOk("start_session", { cwd: repo, worktree: true });
    const b = await mcp.callOk("start_session", { cwd: repo, worktree: true });
    // What two sessions would do: each rewrites the same line, uncommitted.
    writeFileSync(join(a.worktree!.path, "README.md"), "from a\n");
    writeFileSync(join(b.worktree!.path, "README.md"), "from b\n");

    await page.goto(`${srv.url}/#/s/${a.session_id}`);
    await page.waitForSelector("#review:not([hidden]) #r-files li");
    expect(await page.textContent("#r-base")).toBe("main");
    await page.click("#r-merge");
    await until(async () => ((await page.textContent("#r-merged")) ?? "").startsWith("Merged into main"), 30_000);
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("from a\n");
    const after = git(repo, "rev-parse", "main").trim();
    expect(git(repo, "log", "-1", "--format=%s", "main")).toContain(a.session_id);

    await page.goto(`${srv.url}/#/s/${b.session_id}`);
    await page.waitForSelector("#review:not([hidden]) #r-files li");
    await page.click("#r-merge");
    await until(async () => ((await page.textContent("#r-merged")) ?? "").startsWith("Not merged"), 30_000);
    expect(await page.textContent("#r-merged")).toBe("Not merged: conflicts in README.md. main is unchanged.");
    expect(await page.getAttribute("#r-merged", "class")).toBe("error");
    expect(git(repo, "rev-parse", "main").trim()).toBe(after);
    await shot("merge", true);
    for (const s of [a, b]) await mcp.callOk("kill_session", { session_id: s.session_id });
  }, 90_000);

  it("marks two sessions of one repository that edited the same file, live (the conflict radar, issue 34)", async () => {
    const repo = w.dir("radar-repo");
    const env = { PATH: process.env.PATH ?? "", HOME: w.home };
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: repo, encoding: "utf8", env });
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), "x\n");
    git("add", ".");
    git("commit", "-qm", "one");
    const [a, b] = await Promise.all([0, 1].map(() => mcp.callOk("start_session", { cwd: repo, worktree: true })));
    await page.goto(`${srv.url}/#/`);
    await row(b!.session_id).waitFor();
    // An Edit's PostToolUse line, through the session's own hook command (as Claude Code runs it).
    const edited = (s: { session_id: string; claude_session_id: string; cwd?: string | undefined }, file: string) => {
      const settings = JSON.parse(readFileSync(join(w.stateDir, s.session_id, "settings.json"), "utf8")) as {
        hooks: { Stop: Array<{ hooks: Array<{ command: string }> }> };
      };
      const payload = {
        session_id: s.claude_session_id,
        cwd: s.cwd,
        hook_event_name: "PostToolUse",
        tool_name: "Edit",
        tool_input: { file_path: join(s.cwd!, file), old_string: "x", new_string: "y" },
        tool_response: {},
      };
      execFileSync("/bin/sh", ["-c", settings.hooks.Stop[0]!.hooks[0]!.command], { input: JSON.stringify(payload) + "\n", env });
    };
    edited(a!, "a.txt");
    edited(b!, "a.txt");
    for (const [s, other] of [
      [a!, b!],
      [b!, a!],
    ] as const) {
      const mark = row(s.session_id).locator(".badge.overlap");
      await mark.waitFor({ timeout: 10_000 });
      expect(await mark.textContent()).toBe("overlap: a.txt");
      expect(await mark.getAttribute("title")).toBe(`a.txt is also edited by ${other.session_id}`);
    }
    for (const s of [a!, b!]) await mcp.callOk("kill_session", { session_id: s.session_id });
  }, 60_000);

  it("groups sessions by team with node and status, and broadcasts to a team", async () => {
    await page.goto(`${srv.url}/#/teams`);
    const frontend = page.locator('#teams section[data-team="frontend"]');
    await frontend.waitFor();
    expect(await page.locator(`#teams section[data-team="backend"] tr[data-member="${one}"]`).textContent()).toMatch(
      /^alicelocal(idle|ready)/,
    );
    expect(await frontend.locator(`tr[data-member="${two}"]`).textContent()).toMatch(/^boblocal(dead|zombie)/);
    expect(await frontend.locator(`tr[data-member="${formId}"]`).count()).toBe(1);
    await frontend.locator("input").fill("hello team");
    await frontend.locator("button").click();
    await until(async () => (await frontend.locator(".broadcast span").textContent())?.startsWith("sent to 1"), 10_000);
    const done = await mcp.callOk("wait_for_completion", { session_id: formId, timeout_ms: 10_000 });
    expect(done.last_response).toBe("FAKE REPLY: hello team");
    await shot("teams");
  }, 60_000);

  it("marks a team's lead and a member's pending shutdown request (its reason as text), live, until it ends", async () => {
    const cwd = w.dir("ops");
    const lead = (await mcp.callOk("start_session", { cwd, team_name: "ops", teammate_name: "boss", team_lead: true }))
      .session_id;
    const quitter = (await mcp.callOk("start_session", { cwd, team_name: "ops", teammate_name: "quitter" })).session_id;
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${lead}"] td.team .badge.lead`);
    expect(await row(lead).locator("td.team").textContent()).toBe("ops / bosslead");
    expect(await row(quitter).locator("td.team").textContent()).toBe("ops / quitter");
    // The member's own tool, called as its Claude Code would (its member server, the session's secret).
    const member = await connectMember(w.stateDir, quitter);
    try {
      const r = await member.call("request_shutdown", { reason: "done <b>here</b> & gone" });
      expect(r.data).toMatchObject({ requested: true, notified_lead: "boss" });
    } finally {
      await member.close();
    }
    // The open page marks it without a reload; the reason is text, never markup.
    const mark = row(quitter).locator("td.team .badge.shutdown");
    await mark.waitFor({ timeout: 10_000 });
    expect(await mark.textContent()).toBe("shutdown requested: done <b>here</b> & gone");
    expect(await row(quitter).locator("b").count()).toBe(0);
    expect(await row(quitter).getAttribute("class")).toContain("shutdown-requested");
    // A page opened now reads both from list_sessions; the teams page shows them too.
    await page.goto(`${srv.url}/#/teams`);
    await page.reload();
    const ops = page.locator('#teams section[data-team="ops"]');
    await ops.waitFor();
    expect(await ops.locator(`tr[data-member="${lead}"] .badge.lead`).textContent()).toBe("lead");
    expect(await ops.locator(`tr[data-member="${quitter}"] .badge.lead`).count()).toBe(0);
    expect(await ops.locator(`tr[data-member="${quitter}"] .badge.shutdown`).textContent()).toBe(
      "shutdown requested: done <b>here</b> & gone",
    );
    expect(await ops.locator("b").count()).toBe(0);
    await shot("teams-lead-shutdown");
    // Approved (kill_session): the mark goes when the session ends, the lead's badge stays.
    await mcp.callOk("kill_session", { session_id: quitter });
    await until(async () => (await ops.locator(`tr[data-member="${quitter}"] .badge.shutdown`).count()) === 0, 10_000);
    expect(await ops.locator(`tr[data-member="${lead}"] .badge.lead`).count()).toBe(1);
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${quitter}"]`);
    expect(await row(quitter).locator(".badge").count()).toBe(0);
    await mcp.callOk("kill_session", { session_id: lead });
  }, 60_000);

  it("shows the lead badge and a member's shutdown request on their own pages, live, and ends it from there", async () => {
    const cwd = w.dir("crew");
    const lead = (await mcp.callOk("start_session", { cwd, team_name: "crew", teammate_name: "chief", team_lead: true }))
      .session_id;
    const member = (await mcp.callOk("start_session", { cwd, team_name: "crew", teammate_name: "leaver" })).session_id;
    const marks = page.locator("#s-marks");
    // The member's page, open before it asks: no mark, no End it.
    await page.goto(`${srv.url}/#/s/${member}`);
    await until(async () => /^(idle|ready)$/.test((await page.textContent("#s-status")) ?? ""), 10_000);
    expect(await marks.locator(".badge").count()).toBe(0);
    expect(await page.locator("#end-it").count()).toBe(0);
    const m = await connectMember(w.stateDir, member);
    try {
      expect((await m.call("request_shutdown", { reason: "all <i>done</i> & dusted" })).data).toMatchObject({
        requested: true,
        notified_lead: "chief",
      });
    } finally {
      await m.close();
    }
    // The open page marks it without a reload, the reason as text (no markup), with End it next to it.
    const mark = marks.locator(".badge.shutdown");
    await mark.waitFor({ timeout: 10_000 });
    expect(await mark.textContent()).toBe("shutdown requested: all <i>done</i> & dusted");
    expect(await page.locator("#session-view h2 i").count()).toBe(0);
    expect(await marks.locator(".badge.lead").count()).toBe(0);
    expect(await marks.locator("#end-it").textContent()).toBe("End it");
    await shot("session-shutdown");
    // The lead's page: its badge, no mark, no End it.
    await page.goto(`${srv.url}/#/s/${lead}`);
    await until(
      async () => (await page.textContent("#s-id")) === lead && (await marks.locator(".badge.lead").count()) === 1,
      10_000,
    );
    expect(await marks.locator(".badge.lead").textContent()).toBe("lead");
    expect(await marks.locator(".badge.shutdown").count()).toBe(0);
    expect(await page.locator("#end-it").count()).toBe(0);
    // Back on the member's page (its mark read from list_sessions): End it asks as Kill does, then kills it.
    await page.goto(`${srv.url}/#/s/${member}`);
    await mark.waitFor({ timeout: 10_000 });
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.click("#end-it");
    await until(async () => (await page.textContent("#s-status")) === "dead", 15_000);
    expect(asked).toBe(`Kill session ${member}?`);
    await until(async () => (await marks.locator(".badge.shutdown").count()) === 0, 10_000);
    expect(await page.locator("#end-it").count()).toBe(0);
    expect(await page.isVisible("#ended")).toBe(true);
    const status = async () => (await mcp.callOk("list_sessions", {})).sessions.find((s) => s.session_id === member)?.status;
    await until(async () => (await status()) === "dead", 15_000).catch(async () => expect(await status()).toBe("dead"));
    await mcp.callOk("kill_session", { session_id: lead });
  }, 60_000);

  it("fits a phone-sized screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${one}"]`);
    // A row marked "finished while you were away" fits too.
    await page.evaluate(`document.querySelectorAll("#sessions tr.row").forEach((tr) => tr.classList.add("needs-look"))`);
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    expect(Number(overflow)).toBeLessThanOrEqual(0);
    await page.evaluate(`document.querySelectorAll("#sessions tr.row").forEach((tr) => tr.classList.remove("needs-look"))`);
    await shot("list-phone");
    await page.goto(`${srv.url}/#/s/${one}`);
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: hello from the api"), 10_000);
    await shot("session-phone");
    await page.goto(`${srv.url}/#/new`);
    await page.waitForSelector("#start-view:not([hidden])");
    expect(Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))).toBeLessThanOrEqual(0);
    await shot("start-phone");
    const all = await mcp.callOk("list_sessions", {});
    const conversation = all.sessions.find((s) => s.session_id === formId)!.claude_session_id;
    for (const hash of ["#/history/zebra", "#/cost", "#/teams", `#/s/${formId}`, `#/c/${conversation}`]) {
      await page.goto(`${srv.url}/${hash}`);
      await page.waitForSelector("main:not([hidden]):not(#list-view)");
      await page.waitForTimeout(300);
      expect(Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")), hash).toBeLessThanOrEqual(
        0,
      );
    }
    await shot("cost-phone");
  }, 60_000);
});
