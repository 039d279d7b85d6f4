/**
 * The part of node-pty the pty backend uses (node-pty's IPty / spawn, declared here on purpose: the type checker needs
 * no node-pty types), loaded on first use with createRequire, so a machine where the optional native addon did not
 * build only loses this backend.
 */
import { createRequire } from "node:module";

export interface PtyDisposable {
  dispose(): void;
}
export interface PtyChild {
  readonly pid: number;
  onData(listener: (data: string) => void): PtyDisposable;
  onExit(listener: (e: { exitCode: number; signal?: number }) => void): PtyDisposable;
  write(data: string): void;
  pause(): void;
  resume(): void;
}
export interface NodePty {
  spawn(
    file: string,
    args: string[],
    opts: { name: string; cols: number; rows: number; cwd: string; env: Record<string, string>; encoding: "utf8" },
  ): PtyChild;
}

let nodePty: NodePty | undefined;
/** Loads node-pty (and its native addon); throws when it is missing or was built for another Node. */
export function loadNodePty(): NodePty {
  nodePty ??= createRequire(import.meta.url)("node-pty") as NodePty;
  return nodePty;
}
