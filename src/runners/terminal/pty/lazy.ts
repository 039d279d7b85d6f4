/**
 * A backend loaded on first use. The pty backend pulls in node-pty (a native addon) and a headless
 * terminal: a server that only ever runs tmux sessions should not pay their memory.
 */
import {
  ownedInProcess,
  type HostRef,
  type TerminalHost,
  type BackendKind,
  type Key,
  type KillResult,
  type Liveness,
  type TerminalPlan,
  type Spawned,
} from "../../host.js";
import { SessionError } from "../../../core/errors.js";

export class LazyHost implements TerminalHost {
  private loaded: Promise<TerminalHost> | undefined;
  private real: TerminalHost | undefined;

  constructor(
    readonly kind: BackendKind,
    readonly survivesRestart: boolean,
    private readonly load: () => Promise<TerminalHost>,
  ) {}

  private get(): Promise<TerminalHost> {
    this.loaded ??= this.load().then(
      (b) => (this.real = b),
      (e: unknown) => {
        this.loaded = undefined; // a later call may try again (e.g. after npm rebuild)
        throw new SessionError(
          "INVALID_ARGUMENT",
          `the ${this.kind} backend is not available: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`,
          {
            suggestion:
              this.kind === "pty"
                ? 'Run npm install with a C++ toolchain (g++, make, python3) so node-pty builds, or use backend: "tmux".'
                : "Use the other backend.",
          },
        );
      },
    );
    return this.loaded;
  }

  /** Before its host is loaded, as the loaded one will say (a session of another server process, or nobody's). */
  owns(ref: HostRef | undefined): boolean {
    return this.real ? this.real.owns(ref) : ownedInProcess(ref);
  }
  async spawn(spec: TerminalPlan): Promise<Spawned> {
    return (await this.get()).spawn(spec);
  }
  async paste(id: string, text: string): Promise<void> {
    return (await this.get()).paste(id, text);
  }
  async pasteEach(id: string, pieces: readonly string[]): Promise<void> {
    const b = await this.get();
    if (b.pasteEach) return b.pasteEach(id, pieces);
    for (const p of pieces) await b.paste(id, p);
  }
  async keys(id: string, keys: readonly Key[]): Promise<void> {
    return (await this.get()).keys(id, keys);
  }
  async screen(id: string, opts?: { above?: number }): Promise<string> {
    return (await this.get()).screen(id, opts);
  }
  /** Nothing was ever started when nothing was loaded. */
  async list(): Promise<Map<string, Liveness>> {
    return this.real ? this.real.list() : new Map();
  }
  async kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult> {
    return this.real ? this.real.kill(id, opts) : { forced: false };
  }
  async remove(id: string): Promise<void> {
    await this.real?.remove(id);
  }
  async close(): Promise<void> {
    await this.real?.close?.();
  }
}
