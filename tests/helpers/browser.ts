/**
 * Headless Chromium from the OS packages (Debian's `chromium`, installed by .ci/run), driven by playwright-core
 * with its executablePath: Playwright's own browser download is not used. On CI a missing browser fails the
 * browser suite; on a person's machine it is skipped with one loud line.
 */
import { spawnSync } from "node:child_process";
import { chromium, type Browser } from "playwright-core";

export function chromiumPath(): string | undefined {
  const candidates = [
    process.env.CHROMIUM_PATH,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => spawnSync(p, ["--version"], { encoding: "utf8", timeout: 20_000 }).status === 0);
  if (found) return found;
  if (process.env.CI) throw new Error("chromium is not installed, and CI must run the browser suite (.ci/run installs it)");
  console.warn("\n*** chromium is not installed: SKIPPING the browser suite. apt-get install chromium to run it. ***\n");
  return undefined;
}

/** `home`: the test world's HOME, so the browser's caches and NSS files stay out of the user's. */
export function launchChromium(executablePath: string, home: string): Promise<Browser> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return chromium.launch({
    executablePath,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
    env: { ...env, HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_CACHE_HOME: `${home}/.cache` },
  });
}
