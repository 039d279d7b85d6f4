/** Writes Claude Code transcripts in their real line format into a temporary config directory. */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";

export interface Dirs {
  root: string;
  configDir: string;
  stateDir: string;
  cleanup(): void;
}

export function tempDirs(): Dirs {
  const root = mkdtempSync(join(tmpdir(), "cs-history-"));
  const configDir = join(root, "claude");
  const stateDir = join(root, "state");
  mkdirSync(join(configDir, "projects"), { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  return {
    root,
    configDir,
    stateDir,
    cleanup: () => rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
  };
}

export interface UsageIn {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Where a line sits in the conversation chain (uuid / parentUuid) when that is not simply after the last line written. */
export interface Chain {
  uuid?: string;
  parent?: string | null;
}

export class Transcript {
  readonly path: string;
  private clock: number;
  private parent: string | null = null;
  lastUuid: string | null = null;

  constructor(
    configDir: string,
    readonly cwd: string,
    readonly sessionId: string = randomUUID(),
    start = "2026-03-01T10:00:00Z",
  ) {
    const dir = join(configDir, "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, `${sessionId}.jsonl`);
    this.clock = Date.parse(start);
  }

  private ts(): string {
    this.clock += 60_000;
    return new Date(this.clock).toISOString();
  }

  raw(obj: unknown): this {
    appendFileSync(this.path, JSON.stringify(obj) + "\n");
    return this;
  }

  /** `chain` sets the line's uuid or its parent (the line before it in the conversation), for lines written out of order. */
  private base(sidechain: boolean, chain: Chain = {}) {
    const uuid = chain.uuid ?? randomUUID();
    const b = {
      parentUuid: chain.parent !== undefined ? chain.parent : this.parent,
      isSidechain: sidechain,
      userType: "external",
      cwd: this.cwd,
      sessionId: this.sessionId,
      version: "2.1.330",
      uuid,
      timestamp: this.ts(),
    };
    this.parent = uuid;
    this.lastUuid = uuid;
    return b;
  }

  /** A prompt; `promptId` as newer versions write it (the UserPromptSubmit hook's prompt_id). */
  user(text: string, opts: { sidechain?: boolean; promptId?: string } & Chain = {}): this {
    return this.raw({
      ...this.base(opts.sidechain ?? false, opts),
      ...(opts.promptId ? { promptId: opts.promptId } : {}),
      type: "user",
      message: { role: "user", content: text },
    });
  }

  toolResult(content: string): this {
    return this.raw({
      ...this.base(false),
      type: "user",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content }] },
    });
  }

  /** One API message; `blocks` of several entries are written as several lines sharing the id (streaming). */
  assistant(
    blocks: string | Array<{ type: "text"; text: string } | { type: "tool_use"; name: string; input: Record<string, unknown> }>,
    opts: { id?: string; model?: string; usage?: UsageIn; sidechain?: boolean } & Chain = {},
  ): this {
    const id = opts.id ?? `msg_${randomUUID().replace(/-/g, "")}`;
    const list = typeof blocks === "string" ? [{ type: "text" as const, text: blocks }] : blocks;
    const usage = opts.usage ?? {
      input_tokens: 10,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    for (const [i, b] of list.entries()) {
      this.raw({
        ...this.base(opts.sidechain ?? false, i === 0 ? opts : {}),
        type: "assistant",
        message: {
          id,
          type: "message",
          role: "assistant",
          model: opts.model ?? "claude-sonnet-4-5-20250929",
          content: [b],
          stop_reason: null,
          usage,
        },
        requestId: "req_1",
      });
    }
    return this;
  }

  summary(text: string, leafUuid: string | null = this.lastUuid): this {
    return this.raw({ type: "summary", summary: text, leafUuid });
  }

  /** A turn: prompt then a plain reply. */
  turn(prompt: string, reply: string, opts: { model?: string; usage?: UsageIn } = {}): this {
    return this.user(prompt).assistant(reply, opts);
  }
}
