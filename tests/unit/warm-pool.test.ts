/** The warm pool's key (issue #23): which start_session / run_task calls may take a spare, and which spare. */
import { describe, expect, it } from "vitest";
import { WarmPool } from "../../src/sessions/launch/warm-pool.js";

const base = { cwd: "/w/a", backend: "tmux" as const, permission_mode: "default" as const };

describe("WarmPool.keyOf", () => {
  it("the prompt, stream_output, timeout, keep_session and idempotency_key do not change the key; cwd, backend and options do", () => {
    const k = WarmPool.keyOf(base)!.key;
    expect(WarmPool.keyOf({ ...base, prompt: "hi", idempotency_key: "k-1" })!.key).toBe(k);
    expect(WarmPool.keyOf({ ...base, idempotency_key: "k-1" })!.options).not.toHaveProperty("idempotency_key");
    expect(WarmPool.keyOf({ ...base, prompt: "hi", stream_output: true })!.key).toBe(k);
    expect(WarmPool.keyOf({ ...base, prompt: "hi", timeout_ms: 5000, keep_session: false })!.key).toBe(k);
    expect(WarmPool.keyOf({ ...base, node: "local" })!.key).toBe(k);
    expect(WarmPool.keyOf({ permission_mode: "default", backend: "tmux", cwd: "/w/a" })!.key).toBe(k);
    for (const other of [
      { cwd: "/w/b" },
      { backend: "pty" as const },
      { model: "sonnet" },
      { permission_mode: "acceptEdits" as const },
    ]) {
      expect(WarmPool.keyOf({ ...base, ...other })!.key).not.toBe(k);
    }
    expect(WarmPool.keyOf({ ...base, prompt: "x" })!.options).not.toHaveProperty("prompt");
  });

  it("a chosen id, a team, a worktree, setup, env, a log file, MCP servers, Doppler or another node never use the pool", () => {
    const never = [
      { session_id: "mine" },
      { team_name: "crew" },
      { teammate_name: "ann" },
      { worktree: true },
      { worktree: true, setup_command: ["make"] },
      { worktree: true, copy_files: [".env"] },
      { env: { A: "1" } },
      { log_file: "/tmp/x.log" },
      { mcp_servers: {} },
      { doppler: true },
      { doppler_project: "p" },
      { node: "build1" },
    ];
    for (const extra of never) expect(WarmPool.keyOf({ ...base, ...extra } as never), JSON.stringify(extra)).toBeUndefined();
  });
});
