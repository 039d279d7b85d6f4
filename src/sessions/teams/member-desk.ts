/**
 * The team rules of a member's own tools (issue 25; the tools are declared in server/tools/member.ts and called
 * through server/call.ts like any tool): a member is the session whose secret it showed (`<state>/<id>/member.sha256`,
 * members.ts); it acts only inside its own team (a teammate is resolved in the caller's team, a session of another
 * team is refused); only a lead (start_session {team_lead}) starts or ends teammates, with start_session's checks and
 * limits and the lead's own permission settings; messages go through send_message's path (its checks, its queue)
 * within the member's rate (member-rate.ts).
 */
import { realpath } from "node:fs/promises";
import { killInput, listInput, sendInput, startInput } from "../../api/index.js";
import type * as m from "../../api/members.js";
import type { CallContext, MemberCaller } from "../../core/context.js";
import { SessionError, toSessionError } from "../../core/errors.js";
import { inService } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import type { SessionRecord } from "../../store/schema.js";
import { isWithin } from "../../util/fs/paths.js";
import type { SessionService } from "../service.js";
import { teammateBudget } from "../spend/pool.js";
import { appendHandoff, handoffsUri, readHandoffs } from "./handoffs.js";
import { verifyMemberSecret } from "./members.js";
import { rateOf } from "./member-rate.js";

/** The member that called, once its secret was checked. */
export interface Me {
  id: string;
  team: string;
  name: string;
  lead: boolean;
  rec: SessionRecord;
}

const denied = (message: string, suggestion: string) => new SessionError("PERMISSION_DENIED", message, { suggestion });

/**
 * Checks the caller's secret (a wrong or missing one, or a session in no team, is PERMISSION_DENIED and nothing is
 * done; `lead`: only the team's lead may call). The secret is dropped from the caller; its team, name and role are set.
 */
export async function authorizeMember(
  svc: SessionService,
  caller: MemberCaller | undefined,
  tool: string,
  lead = false,
): Promise<MemberCaller> {
  const id = caller?.session_id ?? "-";
  const ok = caller?.secret !== undefined && (await verifyMemberSecret(svc.deps.cfg.stateDir, id, caller.secret));
  if (caller) delete caller.secret;
  const rec = ok ? await svc.deps.store.get(id) : undefined;
  if (!caller || !ok || !rec) {
    throw denied(
      `this member's secret is not the one of session ${id}'s process; nothing was done.`,
      "The member server runs inside a team session and reads the secret its launch made (CLAUDE_SESSIONS_MEMBER_SECRET); a resumed session has a new one.",
    );
  }
  if (!rec.team_name)
    throw denied(`session ${rec.session_id} is in no team.`, "Member tools act inside a team: start the session with team_name.");
  caller.team = rec.team_name;
  caller.name = rec.teammate_name ?? rec.session_id;
  caller.lead = rec.options.team_lead === true;
  if (lead && !caller.lead) {
    throw denied(
      `${tool} is the team lead's; you are not the lead of ${JSON.stringify(caller.team)}.`,
      "Ask the lead (list_teammates shows it) or the client; request_shutdown asks to end yourself.",
    );
  }
  return caller;
}

/** The authorized member of a call's context (its record read again: what it is now). */
async function meOf(svc: SessionService, ctx: CallContext): Promise<Me> {
  const c = ctx.member;
  const team = c?.team;
  const rec = c && team ? await svc.deps.store.get(c.session_id) : undefined;
  if (!c || !team || !rec || rec.team_name !== team)
    throw denied(
      "this call was not made by an authorized team member; nothing was done.",
      "Member tools are called by a team session's own member server.",
    );
  return { id: rec.session_id, team, name: c.name ?? rec.session_id, lead: c.lead === true, rec };
}

/** Notes the teammate a member's call acts on (its audit line names it). */
const touch = (ctx: CallContext, id: string) => {
  if (ctx.member) ctx.member.target = id;
};

/** The team's sessions as list_sessions shows them (statuses with the folds laid over), and their records. */
async function team(svc: SessionService, me: Me) {
  const listed = await svc.list(listInput.parse({ team_filter: me.team }));
  const records = (await svc.deps.store.read()).sessions;
  return listed.sessions.filter((s) => s.team_name === me.team).map((s) => ({ s, rec: records[s.session_id] }));
}

/** A teammate by name (its live session, else its newest) or by session id; another team's session is refused. */
async function teammate(svc: SessionService, me: Me, name: string, what: string): Promise<{ id: string; name: string }> {
  const all = await team(svc, me);
  const named = all.filter((t) => t.s.teammate_name === name);
  const pick =
    named.find((t) => inService(t.s.status)) ??
    named.sort((a, b) => b.s.created_at.localeCompare(a.s.created_at))[0] ??
    all.find((t) => t.s.session_id === name);
  if (pick) {
    if (pick.s.session_id === me.id)
      throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(name)} is you: ${what} names a teammate.`, {
        suggestion: "list_teammates shows the others.",
      });
    return { id: pick.s.session_id, name: pick.s.teammate_name ?? pick.s.session_id };
  }
  const other = await svc.deps.store.get(name);
  if (other) {
    throw denied(
      `session ${name} is not in your team ${JSON.stringify(me.team)}; a member acts only on its own team's sessions.`,
      "list_teammates shows your team; ask the client that started you to reach other sessions.",
    );
  }
  throw new SessionError("SESSION_NOT_FOUND", `your team ${JSON.stringify(me.team)} has no teammate ${JSON.stringify(name)}.`, {
    suggestion: "list_teammates shows your teammates' names.",
  });
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

function doing(f: Readonly<Folded> | undefined, status: string): string | undefined {
  if (!f) return undefined;
  if (f.pending_permission) return `waiting for permission: ${f.pending_permission.tool_name}`;
  if (f.blocked) return `blocked: ${f.blocked.kind}`;
  if (status === "busy" && f.last_prompt) return `working on: ${clip(f.last_prompt, 200)}`;
  return undefined;
}

/** A prompt from a teammate: its name first, so the receiver knows who asks (the text is checked like any prompt). */
const fromLine = (me: Me, text: string) => `From ${me.name}: ${text}`;

/** The member's rate: one more prompt to a teammate, or RATE_LIMITED (nothing sent). */
const rate = (svc: SessionService, me: Me, tool: string) =>
  rateOf(svc, () => svc.deps.cfg.memberMessagesPerMin).take(me.id, tool);

/** list_teammates: the team's sessions in service (and the caller), with what each is doing. */
export async function listTeammates(svc: SessionService, ctx: CallContext): Promise<m.ListTeammatesOutput> {
  const me = await meOf(svc, ctx);
  const mates = (await team(svc, me)).filter((t) => inService(t.s.status) || t.s.session_id === me.id);
  const teammates = mates.map(({ s, rec }) => {
    const f = svc.deps.registry.followed(s.session_id)?.fold;
    const d = doing(f, s.status);
    return {
      teammate_name: s.teammate_name ?? s.session_id,
      session_id: s.session_id,
      status: s.status,
      ...(s.session_id === me.id ? { you: true } : {}),
      ...(rec?.options.team_lead ? { lead: true } : {}),
      ...(d ? { doing: d } : {}),
      ...(s.last_active ? { last_active: s.last_active } : {}),
      ...(f?.shutdown_requested ? { shutdown_requested: f.shutdown_requested } : {}),
    };
  });
  return { team_name: me.team, you: me.name, teammates };
}

/** message_teammate: a prompt "From <me>: …" through send_message's path (queued if busy). */
export async function messageTeammate(
  svc: SessionService,
  a: m.MessageTeammateInput,
  ctx: CallContext,
): Promise<m.MessageTeammateOutput> {
  const me = await meOf(svc, ctx);
  const t = await teammate(svc, me, a.teammate_name, "message_teammate");
  touch(ctx, t.id);
  rate(svc, me, "message_teammate");
  const out = await svc.send(
    sendInput.parse({
      session_id: t.id,
      message: fromLine(me, a.message),
      queue: true,
      wait_for_response: a.wait_for_response,
      timeout_ms: a.timeout_ms,
    }),
    ctx,
  );
  return {
    teammate_name: t.name,
    session_id: t.id,
    delivered: out.message_sent,
    ...(out.queued ? { queued: true } : {}),
    ...(out.response !== undefined ? { response: out.response } : {}),
    ...(out.completed !== undefined ? { completed: out.completed } : {}),
    ...(out.timed_out ? { timed_out: true } : {}),
    status: out.final_state,
  };
}

/** handoff: stored for the team; with `to`, that teammate gets it as a prompt. */
export async function handoff(svc: SessionService, a: m.HandoffInput, ctx: CallContext): Promise<m.HandoffOutput> {
  const me = await meOf(svc, ctx);
  const t = a.to !== undefined ? await teammate(svc, me, a.to, "handoff's to") : undefined;
  if (t) rate(svc, me, "handoff");
  const stored = await appendHandoff(svc.deps.cfg.stateDir, {
    team_name: me.team,
    from: me.name,
    from_session_id: me.id,
    ...(t ? { to: t.name } : {}),
    summary: a.summary,
  });
  if (!t) return { handoff: stored, resource: handoffsUri(me.team) };
  touch(ctx, t.id);
  const out = await svc.send(
    sendInput.parse({ session_id: t.id, message: fromLine(me, `hand-off: ${a.summary}`), queue: true, wait_for_response: false }),
    ctx,
  );
  return { handoff: stored, delivered_to: t.name, ...(out.queued ? { queued: true } : {}), resource: handoffsUri(me.team) };
}

/** read_handoffs: the team's, newest last. */
export async function listHandoffs(svc: SessionService, a: m.ReadHandoffsInput, ctx: CallContext): Promise<m.ReadHandoffsOutput> {
  const me = await meOf(svc, ctx);
  return { team_name: me.team, handoffs: await readHandoffs(svc.deps.cfg.stateDir, me.team, a.limit) };
}

/** request_shutdown: an event of the member's log (its clients are told), and a prompt to a live lead. */
export async function requestShutdown(
  svc: SessionService,
  a: m.RequestShutdownInput,
  ctx: CallContext,
): Promise<m.RequestShutdownOutput> {
  const me = await meOf(svc, ctx);
  const reason = a.reason;
  const lead = me.lead
    ? undefined
    : (await team(svc, me)).find((t) => t.rec?.options.team_lead && inService(t.s.status) && t.s.session_id !== me.id);
  // Telling the lead is a prompt to it: counted as a message is.
  if (lead) rate(svc, me, "request_shutdown");
  // An event of the session's log: every server that follows it tells its clients (notify.ts), and it replays.
  await svc.deps.registry.emit(me.id, { hook_event_name: "cs:shutdown_requested", reason });
  let notified: string | undefined;
  if (lead) {
    const text = fromLine(
      me,
      `request_shutdown: ${reason} (end_teammate {"teammate_name": ${JSON.stringify(me.name)}} approves)`,
    );
    await svc
      .send(sendInput.parse({ session_id: lead.s.session_id, message: text, queue: true, wait_for_response: false }), ctx)
      .then(() => (notified = lead.s.teammate_name ?? lead.s.session_id))
      .catch((e: unknown) =>
        svc.deps.log.warn(`${me.id}: the lead was not told of its shutdown request: ${toSessionError(e).message}`),
      );
  }
  const note = notified
    ? `The client and your lead ${notified} were told; you are ended when one approves.`
    : "The client was told; you are ended when it approves (kill_session).";
  return { requested: true, ...(notified ? { notified_lead: notified } : {}), note };
}

/** start_teammate (lead): a session of the team under the lead's cwd, permission settings, budget and sandbox. */
export async function startTeammate(
  svc: SessionService,
  a: m.StartTeammateInput,
  ctx: CallContext,
): Promise<m.StartTeammateOutput> {
  const me = await meOf(svc, ctx);
  const cwd = a.cwd ?? me.rec.cwd;
  const real = await realpath(cwd).catch(() => cwd);
  if (!isWithin(real, await realpath(me.rec.cwd).catch(() => me.rec.cwd))) {
    throw denied(
      `cwd ${JSON.stringify(cwd)} is not your working directory or a folder under it.`,
      `Start teammates in ${me.rec.cwd} or below.`,
    );
  }
  // The lead's permission settings, not its own choice: a member cannot widen what its team may do.
  const o = me.rec.options;
  // A budgeted lead's teammate shares its budget: what is left of it now, counted against the lead's (pool.ts).
  const budget = await teammateBudget(svc.deps, me.rec);
  const input = startInput.parse({
    cwd,
    team_name: me.team,
    backend: me.rec.backend,
    ...(a.teammate_name !== undefined ? { teammate_name: a.teammate_name } : {}),
    ...(a.prompt !== undefined ? { prompt: a.prompt } : {}),
    ...(a.model !== undefined ? { model: a.model } : o.model ? { model: o.model } : {}),
    ...(o.permission_mode ? { permission_mode: o.permission_mode } : {}),
    ...(o.allowed_tools?.length ? { allowed_tools: o.allowed_tools } : {}),
    ...(o.disallowed_tools?.length ? { disallowed_tools: o.disallowed_tools } : {}),
    ...(budget !== undefined ? { max_budget_usd: budget } : {}),
    // A sandboxed lead's teammates run in the same sandbox (its hosts), whatever the operator's default.
    ...(me.rec.sandbox ? { sandbox: me.rec.sandbox.allow_hosts ? { allow_hosts: me.rec.sandbox.allow_hosts } : true } : {}),
  });
  const out = await svc.start(input, ctx, budget !== undefined ? { budgetPool: me.id } : {});
  touch(ctx, out.session_id);
  return { teammate_name: out.teammate_name ?? out.session_id, session_id: out.session_id, status: out.status };
}

/** end_teammate (lead): kill_session of a teammate (approves its request_shutdown). */
export async function endTeammate(svc: SessionService, a: m.EndTeammateInput, ctx: CallContext): Promise<m.EndTeammateOutput> {
  const me = await meOf(svc, ctx);
  const t = await teammate(svc, me, a.teammate_name, "end_teammate");
  touch(ctx, t.id);
  const out = await svc.kill(killInput.parse({ session_id: t.id, force: a.force }));
  return {
    teammate_name: t.name,
    session_id: t.id,
    ended: out.status === "killed" || out.status === "already_dead",
    status: out.status,
  };
}
