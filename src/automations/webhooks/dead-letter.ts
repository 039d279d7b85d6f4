/**
 * Deliveries that used up their retries: `<state>/webhooks/dead-letter.jsonl` (0600), one JSON line each, changed
 * only under a flock of the file (the server appends, `claude-sessions webhooks replay` removes what it delivered).
 * An entry names its endpoint by a hash of its URL (a chat webhook's URL is itself a secret) and its origin.
 */
import { createHash } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileWhole } from "../../util/fs/atomic.js";
import { withFileLock } from "../../util/proc/flock.js";
import { ensurePrivateFile } from "../../util/fs/private-file.js";

export interface DeadLetter {
  /** `<delivery id>:<endpoint>` (one event's delivery to each endpoint). */
  id: string;
  event: string;
  /** When the event happened and when the last try failed. */
  at: string;
  failed_at: string;
  endpoint: string;
  origin: string;
  attempts: number;
  error: string;
  /** The body as it was sent (already without what the endpoint may not see). */
  body: string;
}

export function endpointKey(url: string): string {
  return createHash("sha256").update(url).digest("hex").slice(0, 16);
}

export function deadLetterFile(stateDir: string): string {
  return join(stateDir, "webhooks", "dead-letter.jsonl");
}

async function prepared(stateDir: string): Promise<string> {
  await mkdir(join(stateDir, "webhooks"), { recursive: true, mode: 0o700 });
  const f = deadLetterFile(stateDir);
  ensurePrivateFile(f);
  return f;
}

export async function appendDeadLetter(stateDir: string, d: DeadLetter): Promise<void> {
  const f = await prepared(stateDir);
  await withFileLock(`${f}.lock`, () => appendFile(f, JSON.stringify(d) + "\n", { mode: 0o600 }));
}

function parse(text: string): DeadLetter[] {
  const out: DeadLetter[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const d = JSON.parse(line) as DeadLetter;
      if (typeof d.id === "string" && typeof d.body === "string" && typeof d.endpoint === "string") out.push(d);
    } catch {
      // a torn line: skipped
    }
  }
  return out;
}

export async function readDeadLetters(stateDir: string): Promise<DeadLetter[]> {
  return parse(await readFile(deadLetterFile(stateDir), "utf8").catch(() => ""));
}

/** Removes the entries `done` says were delivered (read and rewritten under the lock). */
export async function removeDeadLetters(stateDir: string, delivered: ReadonlySet<string>): Promise<void> {
  const f = await prepared(stateDir);
  await withFileLock(`${f}.lock`, async () => {
    const left = parse(await readFile(f, "utf8").catch(() => "")).filter((d) => !delivered.has(d.id));
    await writeFileWhole(f, left.map((d) => JSON.stringify(d) + "\n").join(""));
  });
}
