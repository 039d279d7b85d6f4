/**
 * The web view in a real browser (issue #15): headless Chromium from the OS packages driven by playwright-core,
 * against the built server as `serve --http`, real tmux on a private socket and the fake claude.
 * CS_SCREENSHOTS=1 also copies the screenshots into docs/screenshots/ (the README shows them).
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorld, ROOT, tmuxOrSkip, until, type World } from "../helpers/harness.js";
import { chromiumPath, launchChromium } from "../helpers/browser.js";
import { connectHttp, startHttpServer, type HttpMcp, type HttpServerProc } from "../helpers/http.js";

const CHROMIUM = tmuxOrSkip() ? chromiumPath() : undefined;

describe.runIf(CHROMIUM)("the web view in Chromium", () => {
  let w: World;
  let srv: HttpServerProc;
  let mcp: HttpMcp;
  let browser: Browser;
  let page: Page;
  let one: string;
  let two: string;
  const shots: string[] = [];

  const row = (id: string) => page.locator(`tr[data-id="${id}"]`);
  const shot = async (name: string, fullPage = false) => {
    const file = join(w.root, `${name}.png`);
    await page.screenshot({ path: file, fullPage });
    shots.push(file);
  };

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "tmux" });
    srv = await startHttpServer(w);
    mcp = await connectHttp(srv.url, srv.token);
    one = (await mcp.callOk("start_session", { cwd: w.dir("api-server"), team_name: "backend", teammate_name: "alice" })).session_id;
    two = (await mcp.callOk("start_session", { cwd: w.dir("web-client"), team_name: "frontend", teammate_name: "bob" })).session_id;
    browser = await launchChromium(CHROMIUM!, w.home);
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
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
    await until(async () => (await page.textContent("#terminal .xterm-rows"))?.includes("FAKE REPLY: hello from the page"), 10_000);
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
    const listed = await mcp.callOk("list_sessions", {});
    expect(listed.sessions.find((s) => s.session_id === two)?.status).toBe("dead");
  }, 60_000);

  it("fits a phone-sized screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${srv.url}/#/`);
    await page.waitForSelector(`tr[data-id="${one}"]`);
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    expect(Number(overflow)).toBeLessThanOrEqual(0);
    await shot("list-phone");
    await page.goto(`${srv.url}/#/s/${one}`);
    await until(async () => (await page.textContent("#transcript"))?.includes("FAKE REPLY: hello from the api"), 10_000);
    await shot("session-phone");
  }, 60_000);
});
