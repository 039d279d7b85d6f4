/**
 * The session layer on an in-memory backend (fake-backend.ts) for the fast tier: a fresh state directory, store
 * and SessionService per test, closed and removed after it.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import * as api from "../../src/api/index.js";
import { installScripts } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { TerminalDriver } from "../../src/runners/terminal/driver.js";
import { terminalRunner } from "../../src/runners/terminal/runner.js";
import { SessionService } from "../../src/sessions/service.js";
import { Store } from "../../src/store/store.js";
import { createLogger } from "../../src/util/log.js";
import { FakeBackend } from "./fake-backend.js";
import { FAKE_CLAUDE } from "./paths.js";

export interface FakeServiceFixture {
  root: string;
  fake: FakeBackend;
  svc: SessionService;
  store: Store;
  /** A service on another fake backend, in the same state directory (the caller closes the previous one). */
  service(b: FakeBackend): Promise<SessionService>;
  startIn(extra?: Record<string, unknown>): api.StartInput;
  sendIn(session_id: string, message: string): api.SendInput;
}

/** env: more of the server's environment (e.g. CLAUDE_SESSIONS_UNKNOWN_SCREEN_MS). */
export function fakeService(env: Record<string, string> = {}): FakeServiceFixture {
  const f = {
    root: "",
    async service(b: FakeBackend): Promise<SessionService> {
      const cfg = loadConfig({
        CLAUDE_SESSIONS_DIR: join(f.root, "state"),
        CLAUDE_PATH: FAKE_CLAUDE,
        HOME: join(f.root, "home"),
        CLAUDE_SESSIONS_START_TIMEOUT_MS: "3000",
        ...env,
      });
      const log = createLogger({ level: "error" });
      f.store = new Store(cfg.stateDir, log);
      await f.store.read();
      const scripts = await installScripts(cfg.stateDir);
      // A scripted screen needs no patience: an Enter that was not taken is looked at again after 100 ms.
      const driver = new TerminalDriver(b, log, undefined, { promptRetryAfterMs: 100, inputHandlerMs: 0, pasteLandMs: 0 });
      return new SessionService({
        cfg,
        store: f.store,
        log,
        scripts,
        runners: { [b.kind]: terminalRunner(b, driver) },
        releaseAfterMs: 30,
        persistGatherMs: 1,
        settleQuietMs: 5,
        screenProbeMs: 50,
        screenQuietMs: 100,
      });
    },
    // A folder next to the state directory: a cwd that contains it is refused.
    startIn: (extra: Record<string, unknown> = {}) => api.startInput.parse({ cwd: join(f.root, "work"), ...extra }),
    sendIn: (session_id: string, message: string) => api.sendInput.parse({ session_id, message, timeout_ms: 3000 }),
  } as FakeServiceFixture;
  beforeEach(async () => {
    f.root = mkdtempSync(join(tmpdir(), "cs-unit-"));
    mkdirSync(join(f.root, "work"));
    f.fake = new FakeBackend();
    f.svc = await f.service(f.fake);
  });
  afterEach(async () => {
    await f.svc.close();
    rmSync(f.root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  return f;
}
