/**
 * A team's hand-offs (the member tool `handoff`): one JSON line each in `<state>/teams/<hash of the team>.jsonl`
 * (0600; the file name is a hash, so any team name is a safe path), read back by members (`read_handoffs`) and by
 * clients as the resource `team://<team>/handoffs`.
 */
import { createHash, randomUUID } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { handoffRecord, type HandoffRecord } from "../../api/members.js";
import { SessionError } from "../../core/errors.js";

/** Hand-offs kept per team file read (the newest). */
const READ_MAX = 200;

export function handoffsPath(stateDir: string, team: string): string {
  return join(stateDir, "teams", `${createHash("sha256").update(team, "utf8").digest("hex").slice(0, 32)}.jsonl`);
}

export function handoffsUri(team: string): string {
  return `team://${encodeURIComponent(team)}/handoffs`;
}

export async function appendHandoff(stateDir: string, h: Omit<HandoffRecord, "id" | "at">): Promise<HandoffRecord> {
  const rec: HandoffRecord = { id: randomUUID(), at: new Date().toISOString(), ...h };
  await mkdir(join(stateDir, "teams"), { recursive: true, mode: 0o700 });
  await appendFile(handoffsPath(stateDir, h.team_name), JSON.stringify(rec) + "\n", { mode: 0o600 });
  return rec;
}

/** The team's hand-offs, oldest first, the last `limit`; torn or foreign lines skipped. */
export async function readHandoffs(stateDir: string, team: string, limit = READ_MAX): Promise<HandoffRecord[]> {
  const text = await readFile(handoffsPath(stateDir, team), "utf8").catch(() => "");
  const out: HandoffRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const p = handoffRecord.safeParse(JSON.parse(line));
      if (p.success && p.data.team_name === team) out.push(p.data);
    } catch {
      /* a torn line */
    }
  }
  return out.slice(-Math.min(limit, READ_MAX));
}

/** The resource `team://<team>/handoffs`. */
export const HANDOFFS_TEMPLATE = {
  uriTemplate: "team://{team_name}/handoffs",
  name: "team-handoffs",
  title: "Team hand-offs",
  description: "A team's hand-offs (its members' handoff tool), oldest first, as JSON.",
  mimeType: "application/json",
};

export async function readHandoffsResource(
  stateDir: string,
  uri: string,
): Promise<{ uri: string; mimeType: string; text: string }> {
  const m = /^team:\/\/([^/]+)\/handoffs$/.exec(uri);
  let team: string | undefined;
  try {
    team = m ? decodeURIComponent(m[1]!) : undefined;
  } catch {
    team = undefined;
  }
  if (!team || team.length > 200)
    throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(uri.slice(0, 200))} is not a team resource.`, {
      suggestion: "Use team://{team_name}/handoffs (the team name URI-encoded).",
    });
  return { uri, mimeType: "application/json", text: JSON.stringify(await readHandoffs(stateDir, team), null, 2) };
}
