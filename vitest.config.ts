import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and real tmux on 2 cores: keep the number of files in flight small.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
