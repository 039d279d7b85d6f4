/**
 * The web view's schedules page in a real browser (issue 37): headless Chromium from the OS packages driven by
 * playwright-core, against the built server as `serve --http` (headless sessions of the fake claude, the scheduler
 * looking every 200 ms). A schedule made with the page's form fires and its run shows with its next time; pause,
 * resume and delete are the tool itself (list_schedules over MCP agrees, the audit names the sign-in); a schedule
 * that sends to a session shows its run on that session; a folder outside the allowed roots and a bad cron are
 * refused on the page and store nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorld, until, type World } from "../helpers/harness.js";
import { chromiumPath, launchChromium } from "../helpers/browser.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

const CHROMIUM = chromiumPath();

describe.runIf(CHROMIUM)("the schedules page in Chromium", () => {
  let w: World;
  let srv: HttpServerProc;
  let mcp: HttpMcp;
  let browser: Browser;
  let page: Page;

  const row = (name: string) => page.locator(`#schedules tr[data-name="${name}"]`);
  const listed = async () => (await mcp.callOk("list_schedules", {})).schedules;
  const actors = (tool: string) =>
    readFileSync(join(w.stateDir, "audit.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { tool: string; actor: string })
      .filter((l) => l.tool === tool)
      .map((l) => l.actor);

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless", CLAUDE_SESSIONS_SCHEDULE_TICK_MS: "200" });
    srv = await startHttpServer(w, { CLAUDE_SESSIONS_WEB_ROOTS: w.work });
    mcp = await connectHttp(srv.url, srv.token);
    browser = await launchChromium(CHROMIUM!, w.home);
    page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    await page.goto(`${srv.url}/login`);
    await page.fill("#token", srv.token);
    await page.click("button[type=submit]");
    await page.waitForURL(`${srv.url}/`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await mcp?.close().catch(() => {});
    await srv?.stop();
    w?.cleanup();
  });

  it("makes a schedule with the form; it fires and its run shows; pause, resume and delete are the tool", async () => {
    await page.goto(`${srv.url}/#/schedules`);
    await page.waitForSelector("#schedules-view:not([hidden])");
    await page.waitForSelector("#no-schedules:not([hidden])");
    await page.fill("#sc-name", "from-page");
    await page.selectOption("#sc-kind", "every");
    await page.fill("#sc-when", "2s");
    await page.fill("#sc-cwd", w.dir("sched"));
    await page.fill("#sc-prompt", "hello from a schedule");
    await page.click("#sc-form button[type=submit]");
    await row("from-page").waitFor();
    expect(await row("from-page").locator("td.target").textContent()).toBe(`new session in ${w.dir("sched")}`);
    expect(await row("from-page").locator("td.next").textContent()).not.toBe("—");
    // The run shows on the page without a reload: completed, with its session.
    await until(async () => (await row("from-page").locator("td.runs").textContent())?.includes("completed"), 30_000);
    const s = (await listed()).find((x) => x.name === "from-page")!;
    expect(s.runs.some((r) => r.outcome === "completed")).toBe(true);
    expect(actors("schedule_task")).toEqual([expect.stringMatching(/^web:/)]);

    await row("from-page").locator("button.pause").click();
    await until(async () => (await row("from-page").getAttribute("data-state")) === "paused", 10_000);
    expect((await listed()).find((x) => x.name === "from-page")!.paused).toBe(true);
    expect(await row("from-page").locator("td.next").textContent()).toBe("—");
    await row("from-page").locator("button.resume").click();
    await until(async () => (await row("from-page").getAttribute("data-state")) !== "paused", 10_000);
    expect((await listed()).find((x) => x.name === "from-page")!.paused).toBe(false);
    page.once("dialog", (d) => void d.accept());
    await row("from-page").locator("button.delete").click();
    await row("from-page").waitFor({ state: "detached" });
    expect((await listed()).map((x) => x.name)).not.toContain("from-page");
    expect(actors("change_schedule").length).toBe(3);
  }, 90_000);

  it("a schedule that sends to a session shows its run on that session", async () => {
    const id = (await mcp.callOk("start_session", { cwd: w.dir("keep"), backend: "headless" })).session_id;
    await page.goto(`${srv.url}/#/schedules`);
    await page.waitForSelector("#schedules-view:not([hidden])");
    await page.fill("#sc-name", "to-session");
    await page.selectOption("#sc-kind", "at");
    await page.fill("#sc-when", new Date(Date.now() + 1_500).toISOString());
    await page.fill("#sc-cwd", "");
    await page.fill("#sc-session", id);
    await page.fill("#sc-prompt", "a scheduled nudge");
    await page.click("#sc-form button[type=submit]");
    await row("to-session").waitFor();
    expect(await row("to-session").locator("td.target").textContent()).toBe(`→ session ${id}`);
    await until(async () => (await row("to-session").locator("td.runs").textContent())?.includes("completed"), 30_000);
    expect(await row("to-session").locator(`td.runs a[href="#/s/${id}"]`).count()).toBe(1);
    expect(await row("to-session").locator("td.state").textContent()).toBe("done");
  }, 60_000);

  it("refuses a folder outside the allowed roots and a bad cron on the page, storing nothing", async () => {
    const before = (await listed()).length;
    await page.fill("#sc-session", "");
    await page.fill("#sc-name", "outside");
    await page.selectOption("#sc-kind", "every");
    await page.fill("#sc-when", "5m");
    await page.fill("#sc-cwd", w.root);
    await page.fill("#sc-prompt", "x");
    await page.click("#sc-form button[type=submit]");
    await until(async () => (await page.textContent("#sc-error"))?.startsWith("PERMISSION_DENIED"), 10_000);
    await page.selectOption("#sc-kind", "cron");
    await page.fill("#sc-when", "not a cron");
    await page.fill("#sc-cwd", w.dir("sched"));
    await page.click("#sc-form button[type=submit]");
    await until(async () => (await page.textContent("#sc-error"))?.includes("does not parse"), 10_000);
    expect(await page.textContent("#sc-error")).toMatch(/^INVALID_ARGUMENT/);
    expect(await listed()).toHaveLength(before);
  }, 30_000);

  it("fits a phone-sized screen, the header's new link included", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const hash of ["#/", "#/schedules"]) {
      await page.goto(`${srv.url}/${hash}`);
      await page.waitForSelector(hash === "#/" ? "#list-view:not([hidden])" : '#schedules tr[data-name="to-session"]');
      expect(Number(await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")), hash).toBeLessThanOrEqual(
        0,
      );
    }
  }, 30_000);
});
