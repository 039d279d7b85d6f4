/**
 * The server's side of a member's call (issue 25): the request names its session and carries that session's secret,
 * checked against `<state>/<id>/member.sha256` (sessions/teams/members.ts); the member acts only inside its own team
 * (a teammate is resolved in the caller's team, a session of another team is refused); only a lead
 * (start_session {team_lead}) starts or ends teammates, with start_session's checks and limits and the lead's own
 * permission settings; messages go through send_message's path (its checks, its queue). Every call leaves an audit
 * line with actor `member:<session_id>`.
 */
import { realpath } from "node:fs/promises";
import { killInput, listInput, sendInput, startInput } from "../../api/index.js";
import * as m from "../../api/members.js";
import type { CallContext } from "../../core/context.js";
import { SessionError, toSessionError } from "../../core/errors.js";
import { inService } from "../../core/status.js";
import type { Folded } from "../../events/reducer.js";
import { verifyMemberSecret } from "../../sessions/teams/members.js";
import type { SessionService } from "../../sessions/service.js";
import type { SessionRecord } from "../../store/schema.js";
import { isWithin } from "../../util/fs/paths.js";
import { zodMessage } from "../call.js";
import { teammateBudget } from "../../sessions/spend/pool.js";
import { appendHandoff, handoffsUri, readHandoffs } from "./handoffs.js";
import { rateOf } from "./rate.js";

/** The member that called, once its secret was checked. */
interface Me {
  id: string;
  team: string;
  name: string;
  lead: boolean;
  rec: SessionRecord;
}

const denied = (message: string, suggestion: string) => new SessionError("PERMISSION_DENIED", message, { suggestion });

async function authenticate(svc: SessionService, req: m.MemberRequest): Promise<Me> {
  const ok = await verifyMemberSecret(svc.deps.cfg.stateDir, req.session_id, req.secret);
  const rec = ok ? await svc.deps.store.get(req.session_id) : undefined;
  if (!ok || !rec) {
    throw denied(`this member's secret is not the one of session ${req.session_id}'s process; nothing was done.`, "The member server runs inside a team session and reads the secret its launch made (CLAUDE_SESSIONS_MEMBER_SECRET); a resumed session has a new one.");
  }
  if (!rec.team_name) throw denied(`session ${rec.session_id} is in no team.`, "Member tools act inside a team: start the session with team_name.");
  return { id: rec.session_id, team: rec.team_name, name: rec.teammate_name ?? rec.session_id, lead: rec.options.team_lead === true, rec };
}

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
  const pick = named.find((t) => inService(t.s.status)) ?? named.sort((a, b) => b.s.created_at.localeCompare(a.s.created_at))[0] ?? all.find((t) => t.s.session_id === name);
  if (pick) {
    if (pick.s.session_id === me.id) throw new SessionError("INVALID_ARGUMENT", `${JSON.stringify(name)} is you: ${what} names a teammate.`, { suggestion: "list_teammates shows the others." });
    return { id: pick.s.session_id, name: pick.s.teammate_name ?? pick.s.session_id };
  }
  const other = await svc.deps.store.get(name);
  if (other) {
    throw denied(`session ${name} is not in your team ${JSON.stringify(me.team)}; a member acts only on its own team's sessions.`, "list_teammates shows your team; ask the client that started you to reach other sessions.");
  }
  throw new SessionError("SESSION_NOT_FOUND", `your team ${JSON.stringify(me.team)} has no teammate ${JSON.stringify(name)}.`, { suggestion: "list_teammates shows your teammates' names." });
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

type Result = Record<string, unknown>;

async function run(svc: SessionService, me: Me, tool: m.MemberToolName, args: Record<string, unknown>, ctx: CallContext, touched: (id: string) => void): Promise<Result> {
  const stateDir = svc.deps.cfg.stateDir;
  const rate = () => rateOf(svc, () => svc.deps.cfg.memberMessagesPerMin).take(me.id, tool);
  switch (tool) {
    case "list_teammates": {
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
      return { team_name: me.team, you: me.name, teammates } satisfies m.ListTeammatesOutput;
    }
    case "message_teammate": {
      const a = args as m.MessageTeammateInput;
      const t = await teammate(svc, me, a.teammate_name, "message_teammate");
      touched(t.id);
      rate();
      const out = await svc.send(sendInput.parse({ session_id: t.id, message: fromLine(me, a.message), queue: true, wait_for_response: a.wait_for_response, timeout_ms: a.timeout_ms }), ctx);
      return {
        teammate_name: t.name,
        session_id: t.id,
        delivered: out.message_sent,
        ...(out.queued ? { queued: true } : {}),
        ...(out.response !== undefined ? { response: out.response } : {}),
        ...(out.completed !== undefined ? { completed: out.completed } : {}),
        ...(out.timed_out ? { timed_out: true } : {}),
        status: out.final_state,
      } satisfies m.MessageTeammateOutput;
    }
    case "handoff": {
      const a = args as m.HandoffInput;
      const t = a.to !== undefined ? await teammate(svc, me, a.to, "handoff's to") : undefined;
      if (t) rate();
      const handoff = await appendHandoff(stateDir, { team_name: me.team, from: me.name, from_session_id: me.id, ...(t ? { to: t.name } : {}), summary: a.summary });
      if (!t) return { handoff, resource: handoffsUri(me.team) } satisfies m.HandoffOutput;
      touched(t.id);
      const out = await svc.send(sendInput.parse({ session_id: t.id, message: fromLine(me, `hand-off: ${a.summary}`), queue: true, wait_for_response: false }), ctx);
      return { handoff, delivered_to: t.name, ...(out.queued ? { queued: true } : {}), resource: handoffsUri(me.team) } satisfies m.HandoffOutput;
    }
    case "read_handoffs":
      return { team_name: me.team, handoffs: await readHandoffs(stateDir, me.team, (args as { limit: number }).limit) };
    case "request_shutdown": {
      const reason = (args as m.RequestShutdownInput).reason;
      const lead = me.lead ? undefined : (await team(svc, me)).find((t) => t.rec?.options.team_lead && inService(t.s.status) && t.s.session_id !== me.id);
      // Telling the lead is a prompt to it: counted as a message is.
      if (lead) rate();
      // An event of the session's log: every server that follows it tells its clients (notify.ts), and it replays.
      await svc.deps.registry.emit(me.id, { hook_event_name: "cs:shutdown_requested", reason });
      let notified: string | undefined;
      if (lead) {
        const text = fromLine(me, `request_shutdown: ${reason} (end_teammate {"teammate_name": ${JSON.stringify(me.name)}} approves)`);
        await svc
          .send(sendInput.parse({ session_id: lead.s.session_id, message: text, queue: true, wait_for_response: false }), ctx)
          .then(() => (notified = lead.s.teammate_name ?? lead.s.session_id))
          .catch((e: unknown) => svc.deps.log.warn(`${me.id}: the lead was not told of its shutdown request: ${toSessionError(e).message}`));
      }
      const note = notified ? `The client and your lead ${notified} were told; you are ended when one approves.` : "The client was told; you are ended when it approves (kill_session).";
      return { requested: true, ...(notified ? { notified_lead: notified } : {}), note } satisfies m.RequestShutdownOutput;
    }
    case "start_teammate": {
      const a = args as m.StartTeammateInput;
      const cwd = a.cwd ?? me.rec.cwd;
      const real = await realpath(cwd).catch(() => cwd);
      if (!isWithin(real, await realpath(me.rec.cwd).catch(() => me.rec.cwd))) {
        throw denied(`cwd ${JSON.stringify(cwd)} is not your working directory or a folder under it.`, `Start teammates in ${me.rec.cwd} or below.`);
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
      touched(out.session_id);
      return { teammate_name: out.teammate_name ?? out.session_id, session_id: out.session_id, status: out.status } satisfies m.StartTeammateOutput;
    }
    case "end_teammate": {
      const a = args as m.EndTeammateInput;
      const t = await teammate(svc, me, a.teammate_name, "end_teammate");
      touched(t.id);
      const out = await svc.kill(killInput.parse({ session_id: t.id, force: a.force }));
      return { teammate_name: t.name, session_id: t.id, ended: out.status === "killed" || out.status === "already_dead", status: out.status } satisfies m.EndTeammateOutput;
    }
  }
}

/** Answers one member request; never throws (a failure is the error's body). */
export async function handleMember(svc: SessionService, raw: unknown, ctx: CallContext = {}): Promise<m.MemberResponse> {
  const t0 = Date.now();
  const parsed = m.memberRequest.safeParse(raw);
  if (!parsed.success) return { ok: false, error: new SessionError("INVALID_ARGUMENT", `not a member request: ${zodMessage(parsed.error)}`).toBody() };
  const req = parsed.data;
  let target: string | undefined;
  const audit = (code?: string) =>
    void svc.audit.append({
      time: new Date(t0).toISOString(),
      tool: req.tool,
      session_id: target ?? req.session_id,
      actor: `member:${req.session_id}`,
      outcome: code ? "error" : "ok",
      ...(code ? { error_code: code } : {}),
      duration_ms: Date.now() - t0,
    });
  try {
    const me = await authenticate(svc, req);
    const def = m.MEMBER_TOOL_DEFS[req.tool];
    const args = def.input.safeParse(req.arguments);
    if (!args.success) throw new SessionError("INVALID_ARGUMENT", `invalid arguments for ${req.tool}: ${zodMessage(args.error)}`);
    if ((m.LEAD_TOOLS as readonly string[]).includes(req.tool) && !me.lead) {
      throw denied(`${req.tool} is the team lead's; you are not the lead of ${JSON.stringify(me.team)}.`, "Ask the lead (list_teammates shows it) or the client; request_shutdown asks to end yourself.");
    }
    const result = await run(svc, me, req.tool, args.data as Record<string, unknown>, { ...ctx, actor: `member:${me.id}` }, (id) => (target = id));
    const checked = def.output.safeParse(result);
    if (!checked.success) {
      const why = `${req.tool} returned a result that does not match its output schema: ${zodMessage(checked.error)}`;
      if (svc.deps.cfg.strictResults) throw new SessionError("INTERNAL", why);
      svc.deps.log.error(why);
    }
    audit();
    return { ok: true, result };
  } catch (e) {
    const err = toSessionError(e);
    audit(err.code);
    return { ok: false, error: err.toBody() };
  }
}
