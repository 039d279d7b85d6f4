import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and real tmux on 2 cores: keep the number of files in flight small.
    maxWorkers: 2,
    fileParallelism: true,
    // Transformed modules kept on disk between runs (node_modules/.experimental-vitest-cache): a rerun skips the
    // TypeScript transform of everything that did not change.
    experimental: { fsModuleCache: true },
    projects: [
      {
        extends: true,
        test: {
          // The fast tier (npm run test:unit): no tmux, no real processes but the hook script. One thread pool
          // without per-file isolation (the modules are loaded once per thread) and temp files on a tmpfs.
          name: "unit",
          include: ["tests/unit/**/*.test.ts"],
          pool: "threads",
          isolate: false,
          setupFiles: ["tests/helpers/unit-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "processes",
          // Real processes, tmux, test hosts and the real CLI on 2 shared cores: a test that fails is run again up to
          // twice (a failure three times in a row fails the suite). Its failures are still printed as retries.
          retry: 2,
          include: ["tests/**/*.test.ts"],
          exclude: ["tests/unit/**", "**/node_modules/**"],
        },
      },
    ],
  },
});
