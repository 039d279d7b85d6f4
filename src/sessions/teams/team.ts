/**
 * Teams: naming a session by team_name + teammate_name (the one place a call's address is resolved), teammate
 * names (unique among a team's live sessions, checked under the store lock), and the members of a group.
 */
import type { Resolved } from "../../api/index.js";
import { SessionError } from "../../core/errors.js";
import { inService } from "../../core/status.js";
import type { SessionRecord } from "../../store/schema.js";
import type { Deps } from "../deps.js";
import { applyFold } from "../views.js";

interface Address {
  session_id?: string | undefined;
  team_name?: string | undefined;
  teammate_name?: string | undefined;
}

/** The record as this process knows it best: the stored one with the fold it follows laid over it. */
function current(d: Deps, r: SessionRecord): SessionRecord {
  const f = d.registry.followed(r.session_id);
  if (!f) return r;
  const c = structuredClone(r);
  applyFold(c, f.fold);
  return c;
}

/**
 * The session a call names: session_id, or team_name + teammate_name (the live session with that name, else the
 * most recent one, so an ended teammate can be resumed by name). Exactly one form.
 */
export async function resolveId(d: Deps, a: Address): Promise<string> {
  if (a.session_id !== undefined) {
    if (a.teammate_name !== undefined) {
      throw new SessionError("INVALID_ARGUMENT", "name the session by session_id or by team_name + teammate_name, not both.");
    }
    return a.session_id;
  }
  if (a.team_name === undefined || a.teammate_name === undefined) {
    throw new SessionError("INVALID_ARGUMENT", "name the session: session_id, or team_name and teammate_name.", {
      suggestion: "list_sessions shows every session's id, team_name and teammate_name.",
    });
  }
  const all = Object.values((await d.store.read()).sessions).filter(
    (r) => r.team_name === a.team_name && r.teammate_name === a.teammate_name,
  );
  const pick =
    all.find((r) => inService(current(d, r).status)) ?? all.sort((x, y) => y.created_at.localeCompare(x.created_at))[0];
  if (!pick) {
    throw new SessionError(
      "SESSION_NOT_FOUND",
      `team ${JSON.stringify(a.team_name)} has no teammate ${JSON.stringify(a.teammate_name)}.`,
      {
        suggestion: `list_sessions {team_filter: ${JSON.stringify(a.team_name)}} shows the team's members.`,
      },
    );
  }
  return pick.session_id;
}

/** A call with its session resolved: the session layer's modules only ever see a session_id. */
export async function resolved<T extends Address>(d: Deps, input: T): Promise<Resolved<T>> {
  const id = await resolveId(d, input);
  const { team_name: _t, teammate_name: _n, session_id: _s, ...rest } = input;
  return { ...rest, session_id: id };
}

/**
 * Gives `rec` a teammate name when it joins a team without one (member-1, member-2, … the first free), and refuses
 * a name another live session of the team holds. Runs inside the store's update, so two starts cannot both take it.
 */
export function claimTeammate(sessions: Record<string, SessionRecord>, rec: SessionRecord): void {
  if (!rec.team_name) {
    if (rec.teammate_name) throw new SessionError("INVALID_ARGUMENT", "teammate_name needs a team_name.");
    return;
  }
  const others = Object.values(sessions).filter((r) => r.session_id !== rec.session_id && r.team_name === rec.team_name);
  if (!rec.teammate_name) {
    // Names of ended members stay theirs too, so a name always means one conversation.
    const taken = new Set(others.map((r) => r.teammate_name));
    let n = 1;
    while (taken.has(`member-${n}`)) n += 1;
    rec.teammate_name = `member-${n}`;
    return;
  }
  const holder = others.find((r) => r.teammate_name === rec.teammate_name && inService(r.status));
  if (holder) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `team ${JSON.stringify(rec.team_name)} already has a live teammate ${JSON.stringify(rec.teammate_name)} (session ${holder.session_id}).`,
      {
        suggestion: "Choose another teammate_name, leave it out for a generated one, or kill that session first.",
      },
    );
  }
}

export interface Member {
  session_id: string;
  teammate_name?: string;
}

/** The sessions of a group: every live (or hibernated) session of a team, or the listed ids (unknown ids are SESSION_NOT_FOUND). */
export async function members(
  d: Deps,
  g: { team_name?: string | undefined; session_ids?: string[] | undefined },
): Promise<Member[]> {
  if ((g.team_name === undefined) === (g.session_ids === undefined)) {
    throw new SessionError("INVALID_ARGUMENT", "name the group: team_name or session_ids (one of them).");
  }
  const sessions = (await d.store.read()).sessions;
  const view = (r: SessionRecord): Member => ({
    session_id: r.session_id,
    ...(r.teammate_name ? { teammate_name: r.teammate_name } : {}),
  });
  if (g.session_ids) {
    const ids = [...new Set(g.session_ids)];
    const missing = ids.filter((id) => !sessions[id]);
    if (missing.length)
      throw new SessionError("SESSION_NOT_FOUND", `no session with id ${missing.map((m) => JSON.stringify(m)).join(", ")}.`);
    return ids.map((id) => view(sessions[id]!));
  }
  const team = Object.values(sessions)
    .map((r) => current(d, r))
    .filter((r) => r.team_name === g.team_name && inService(r.status))
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
  if (!team.length) {
    throw new SessionError("SESSION_NOT_FOUND", `team ${JSON.stringify(g.team_name)} has no live sessions.`, {
      suggestion: "Start sessions with start_session {team_name}; list_sessions {team_filter} shows a team.",
    });
  }
  return team.map(view);
}

/** A progress reporter for a call over many sessions: one stream whose value only grows (MCP requires it). */
export function progressStream(
  report: ((p: { progress: number; total?: number; message?: string }) => void) | undefined,
  total: number,
) {
  let last = -1;
  return (message: string, value?: number) => {
    if (!report) return;
    last = Math.max(last + 1, value ?? 0);
    report({ progress: last, total, message });
  };
}
