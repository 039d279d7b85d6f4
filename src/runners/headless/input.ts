/**
 * The streaming input of one long-lived query(): prompts are pushed here and read by the SDK, which writes
 * them to the CLI's stdin as stream-json. No terminal is involved, so the text reaches the CLI as given.
 */
import type { SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

export class PromptQueue implements AsyncIterable<SDKUserMessage> {
  private readonly items: SDKUserMessage[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  push(text: string, opts: { verbatim?: boolean; uuid?: `${string}-${string}-${string}-${string}-${string}` } = {}): void {
    if (this.ended) throw new Error("the session's input is closed");
    const m: SDKUserMessage = { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
    if (opts.verbatim) m.client_composed = true;
    if (opts.uuid) m.uuid = opts.uuid;
    this.items.push(m);
    this.poke();
  }

  /** No more prompts: the iterator ends, which closes the CLI's stdin. */
  end(): void {
    this.ended = true;
    this.poke();
  }

  private poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    for (;;) {
      const next = this.items.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
