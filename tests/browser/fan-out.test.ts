/**
 * The web view's fan-out page in Chromium (issue 34): the form sends one prompt to three sessions (headless fake
 * claude, real git, the operator's check), shows the progress lines as they come and the ranked table; the Merge
 * button of the winner lands it in main, the loser's says it conflicts and main stays; a folder outside the page's
 * roots is refused with nothing made. CS_SCREENSHOTS=1 writes docs/screenshots/fan-out.png.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorld, ROOT, until, type World } from "../helpers/harness.js";
import { chromiumPath, launchChromium } from "../helpers/browser.js";
import { startHttpServer, type HttpServerProc } from "../helpers/http.js";

const CHROMIUM = chromiumPath();

describe.runIf(CHROMIUM)("the fan-out page in Chromium", () => {
  let w: World;
  let srv: HttpServerProc;
  let browser: Browser;
  let page: Page;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  const worktrees = () => (existsSync(join(w.stateDir, "worktrees")) ? readdirSync(join(w.stateDir, "worktrees")) : []);

  beforeAll(async () => {
    w = makeWorld({ CLAUDE_SESSIONS_BACKEND: "headless" });
    const checks = join(w.root, "checks.json");
    writeFileSync(
      checks,
      JSON.stringify({ checks: [{ name: "answer", argv: ["grep", "-qx", "good", "app.txt"], timeout_ms: 20_000 }] }),
    );
    srv = await startHttpServer(w, { CLAUDE_SESSIONS_WEB_ROOTS: w.work, CLAUDE_SESSIONS_CHECKS: checks });
    browser = await launchChromium(CHROMIUM!, w.home);
    page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    await page.goto(`${srv.url}/`);
    await page.fill("#token", srv.token);
    await page.click("button[type=submit]");
    await page.waitForSelector("#sessions");
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.stop();
    w?.cleanup();
  });

  it("fans out from the form: progress, the ranked table, the winner merged, the loser's merge a conflict", async () => {
    const repo = w.dir("fan-web");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "app.txt"), "todo\n");
    git(repo, "add", ".");
    git(repo, "commit", "-qm", "first");
    const marker = join(w.root, "first-claim");

    await page.click("#fan-link");
    await page.waitForSelector("#fan-out-view:not([hidden])");
    await until(async () => (await page.locator("#fo-mode option").count()) > 1, 10_000);
    await page.fill("#fo-cwd", repo);
    await page.fill(
      "#fo-prompt",
      `FAKE_BASH:if mkdir ${marker} 2>/dev/null; then echo bad > app.txt; else echo good > app.txt; fi`,
    );
    await page.fill("#fo-n", "3");
    await page.selectOption("#fo-mode", "dontAsk");
    await page.fill("#fo-deadline", "2");
    await page.check("#fo-trust");
    await page.click("#fan button[type=submit]");

    await page.waitForSelector("#fo-table:not([hidden]), #fo-error:not(:empty)", { timeout: 150_000 });
    await page.waitForSelector("#fo-table:not([hidden])", { timeout: 1_000 }).catch(async (e: unknown) => {
      throw new Error(
        `${String(e)}\nprogress: ${(await page.locator("#fo-progress li").allTextContents()).join(" | ")}\nsummary: ${await page.textContent("#fo-summary")}\nerror: ${await page.textContent("#fo-error")}`,
      );
    });
    const progress = await page.locator("#fo-progress li").allTextContents();
    expect(progress.filter((p) => /\(\d\/3\)/.test(p))).toHaveLength(3);
    expect(progress.filter((p) => p.startsWith("checks of"))).toHaveLength(3);
    const rows = page.locator("#fo-table tbody tr");
    expect(await rows.count()).toBe(3);
    const cells = async (i: number) => rows.nth(i).locator("td").allTextContents();
    expect((await cells(0))[0]).toBe("1");
    expect((await cells(0))[4]).toBe("1/1");
    expect((await cells(1))[4]).toBe("1/1");
    expect((await cells(2))[0]).toBe("3");
    expect((await cells(2))[4]).toBe("0/1");
    expect(await page.textContent("#fo-summary")).toContain(git(repo, "rev-parse", "HEAD").trim().slice(0, 12));

    const before = git(repo, "rev-parse", "main").trim();
    await rows.nth(0).locator("button.merge").click();
    await until(async () => ((await rows.nth(0).locator(".merged").textContent()) ?? "").includes("Merged into main"), 60_000);
    expect(readFileSync(join(repo, "app.txt"), "utf8")).toBe("good\n");
    const after = git(repo, "rev-parse", "main").trim();
    expect(after).not.toBe(before);

    await rows.nth(2).locator("button.merge").click();
    await until(async () => ((await rows.nth(2).locator(".merged").textContent()) ?? "").includes("Not merged"), 60_000);
    expect((await rows.nth(2).locator(".merged").textContent())?.trim()).toBe(
      "Not merged: conflicts in app.txt. main is unchanged.",
    );
    expect(git(repo, "rev-parse", "main").trim()).toBe(after);
    // CS_SCREENSHOTS=1: the picture docs/web.md shows.
    if (process.env.CS_SCREENSHOTS === "1")
      await page.screenshot({ path: join(ROOT, "docs", "screenshots", "fan-out.png"), fullPage: true });
  }, 240_000);

  it("refuses a folder outside the page's roots, with nothing made", async () => {
    const made = worktrees().length;
    await page.goto(`${srv.url}/#/fan-out`);
    await page.waitForSelector("#fan-out-view:not([hidden])");
    await page.fill("#fo-cwd", w.root);
    await page.fill("#fo-prompt", "hello");
    await page.click("#fan button[type=submit]");
    await until(async () => ((await page.textContent("#fo-error")) ?? "").length > 0, 20_000);
    expect(await page.textContent("#fo-error")).toContain("PERMISSION_DENIED");
    expect(await page.isHidden("#fo-table")).toBe(true);
    expect(worktrees().length).toBe(made);
  }, 60_000);
});
