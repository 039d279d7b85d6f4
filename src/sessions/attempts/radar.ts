/**
 * The conflict radar (issue 34): the hooks report every edit (PostToolUse of Edit, Write, MultiEdit, NotebookEdit,
 * with the file's absolute path); when two live sessions of the same repository have edited the same file (its
 * path relative to each one's worktree, or cwd), both are told: `overlaps` on list_sessions and a notification, as
 * the second edit's hook line is folded. Memory only (this process's sessions since it started).
 */
import { isAbsolute, relative } from "node:path";
import { isLive } from "../../core/status.js";
import type { LogEvent } from "../../events/reducer.js";
import type { Deps } from "../deps.js";
import { isWithin } from "../../util/fs/paths.js";

export const EDIT_TOOLS: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"]);
/** Files remembered per session (the oldest go first). */
const MAX_FILES = 1000;

export interface Overlap {
  /** The other session. */
  session_id: string;
  /** The file, relative to the repository's top. */
  file: string;
}

export interface OverlapNotice {
  session_id: string;
  other_session_id: string;
  file: string;
  repo: string;
}

interface Edits {
  repo: string;
  root: string;
  files: Set<string>;
}

export class Radar {
  private readonly edits = new Map<string, Edits>();
  private readonly listeners = new Set<(n: OverlapNotice) => void>();
  constructor(private readonly d: Deps) {}

  onOverlap(l: (n: OverlapNotice) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  private live(id: string): boolean {
    const s = this.d.registry.followed(id)?.fold.status;
    return s !== undefined && isLive(s);
  }

  /** The events of one batch of a session's log. */
  observe(id: string, events: readonly LogEvent[]): void {
    const paths: string[] = [];
    for (const e of events) {
      if (e.hook_event_name !== "PostToolUse" || !e.tool_name || !EDIT_TOOLS.has(e.tool_name)) continue;
      const input = e.tool_input as { file_path?: unknown; notebook_path?: unknown } | null | undefined;
      const p = input?.file_path ?? input?.notebook_path;
      if (typeof p === "string" && isAbsolute(p)) paths.push(p);
    }
    if (paths.length) void this.add(id, paths).catch((e: unknown) => this.d.log.warn(`${id}: conflict radar: ${String(e)}`));
  }

  private async add(id: string, paths: string[]): Promise<void> {
    let mine = this.edits.get(id);
    if (!mine) {
      const r = await this.d.store.get(id);
      if (!r) return;
      const root = r.worktree?.path ?? r.cwd;
      mine = this.edits.get(id) ?? { repo: r.worktree?.repo ?? r.cwd, root, files: new Set() };
      this.edits.set(id, mine);
    }
    for (const p of paths) {
      const file = isWithin(p, mine.root) ? relative(mine.root, p) : p;
      mine.files.delete(file);
      mine.files.add(file);
      if (mine.files.size > MAX_FILES) mine.files.delete(mine.files.values().next().value!);
      for (const [other, e] of this.edits) {
        if (other === id || e.repo !== mine.repo || !e.files.has(file) || !this.live(other)) continue;
        for (const l of [...this.listeners]) {
          l({ session_id: id, other_session_id: other, file, repo: mine.repo });
          l({ session_id: other, other_session_id: id, file, repo: mine.repo });
        }
      }
    }
  }

  /** A live session's overlaps with other live sessions (none when it is not live). */
  overlapsOf(id: string): Overlap[] {
    const mine = this.edits.get(id);
    if (!mine || !this.live(id)) return [];
    const out: Overlap[] = [];
    for (const [other, e] of this.edits) {
      if (other === id || e.repo !== mine.repo || !this.live(other)) continue;
      for (const f of mine.files) if (e.files.has(f)) out.push({ session_id: other, file: f });
    }
    return out;
  }

  forget(id: string): void {
    this.edits.delete(id);
  }
}
