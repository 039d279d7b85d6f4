// The web view of claude-sessions: plain browser JavaScript, no build step. Live data comes from server-sent
// events (/api/events for the list, /api/sessions/<id>/events for one session); the page never polls.
"use strict";
(function () {
  if (document.body.classList.contains("login")) {
    if (location.search.includes("failed")) document.body.classList.add("failed");
    return;
  }
  const $ = (s) => document.querySelector(s);
  const rows = new Map();
  let csrf = null;
  let listFeed = null;
  let sessionFeed = null;
  let term = null;
  let current = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function ago(iso) {
    if (!iso) return "";
    const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    return s < 60 ? `${s}s ago` : s < 3600 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
  }
  const ENDED = new Set(["dead", "error", "zombie"]);
  const unseen = new Set(); // finished or failed while the person was not looking at it
  const needsAnswer = (r) =>
    r.status === "waiting_for_permission" || r.status === "blocked" || Boolean(r.pending_permission) || Boolean(r.blocked);

  async function post(path, body) {
    const r = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf || "" },
      body: JSON.stringify(body || {}),
    });
    const j = await r.json().catch(() => ({}));
    if (r.status === 401) location.href = "/login";
    if (!r.ok)
      throw new Error(
        (j.error &&
          `${j.error.code ? j.error.code + ": " : ""}${j.error.message}${j.error.suggestion ? " " + j.error.suggestion : ""}`) ||
          `HTTP ${r.status}`,
      );
    return j;
  }

  // ------------------------------------------------------------------ the list
  function renderRow(r) {
    let tr = document.querySelector(`tr[data-id="${CSS.escape(r.session_id)}"]`);
    if (!tr) {
      tr = el("tr", "row");
      tr.dataset.id = r.session_id;
      for (const c of ["id", "node", "status", "team", "cwd", "backend", "active", "turns", "cost"]) tr.appendChild(el("td", c));
      tr.addEventListener("click", () => (location.hash = `#/s/${encodeURIComponent(r.session_id)}`));
      $("#sessions tbody").prepend(tr);
    }
    const c = tr.children;
    c[0].textContent = r.session_id;
    // The machine it runs on, when the server coordinates nodes (the column shows once a row has one).
    c[1].textContent = r.node ? `${r.node}${r.node_status ? ` (${r.node_status})` : ""}` : "local";
    if (r.node) $("#sessions").classList.add("with-nodes");
    const st = el("span", `status ${r.status}`, r.status);
    if (r.status === "limited" && r.limit)
      st.title = `${r.limit.limit_kind} limit until ${new Date(r.limit.resets_at).toLocaleString()}${r.limit.wake_at ? `; woken at ${new Date(r.limit.wake_at).toLocaleString()}` : ""}`;
    c[2].replaceChildren(st, ...sandboxMarks(r), ...overlapMarks(r));
    c[3].replaceChildren([r.team_name, r.teammate_name].filter(Boolean).join(" / "), ...teamMarks(r));
    c[4].textContent = r.cwd || "";
    c[4].title = r.cwd || "";
    c[5].textContent = r.backend || "";
    c[6].textContent = ago(r.last_active);
    c[6].dataset.iso = r.last_active || "";
    c[7].textContent = String(r.turn_count ?? "");
    c[8].textContent = typeof r.total_cost_usd === "number" ? `$${r.total_cost_usd.toFixed(4)}` : "";
    tr.dataset.status = r.status;
    tr.dataset.turns = String(r.turn_count ?? "");
    tr.classList.toggle("needs-answer", needsAnswer(r));
    tr.classList.toggle("needs-look", unseen.has(r.session_id));
    tr.classList.toggle("shutdown-requested", Boolean(r.shutdown_requested));
    $("#empty").hidden = rows.size > 0;
    countNeeds();
  }
  // A team's lead, and a member that asked to be ended (request_shutdown) with its reason: text nodes only.
  function teamMarks(r) {
    const marks = [];
    if (r.team_lead) marks.push(el("span", "badge lead", "lead"));
    if (r.shutdown_requested) {
      const m = el("span", "badge shutdown", `shutdown requested: ${r.shutdown_requested}`);
      m.title = "It asked to be ended; kill approves.";
      marks.push(m);
    }
    return marks;
  }
  function merge(change) {
    const r = rows.get(change.session_id);
    if (!r) return false;
    noticeChange(r, change);
    Object.assign(r, change);
    if (change.pending_permission === null) delete r.pending_permission;
    if (change.shutdown_requested === null) delete r.shutdown_requested;
    if (change.limit === null) delete r.limit;
    renderRow(r);
    // The totals come once a turn's usage is recorded: the session page's turns and the cost page follow them.
    if ("total_cost_usd" in change && CS.onTotals) CS.onTotals(r);
    if (CS.onRows) CS.onRows();
    return true;
  }
  function openList() {
    if (listFeed) listFeed.close();
    listFeed = new EventSource("/api/events");
    listFeed.addEventListener("open", () => ($("#conn").textContent = "live"));
    listFeed.addEventListener("error", () => ($("#conn").textContent = "reconnecting…"));
    listFeed.addEventListener("snapshot", (e) => {
      rows.clear();
      $("#sessions tbody").replaceChildren();
      const all = JSON.parse(e.data).sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)));
      for (const r of all) rows.set(r.session_id, r);
      for (const r of all) renderRow(r);
      $("#empty").hidden = rows.size > 0;
      if (CS.onRows) CS.onRows();
    });
    // A session this page has not seen: reopen the feed, which starts with a fresh snapshot.
    listFeed.addEventListener("change", (e) => merge(JSON.parse(e.data)) || openList());
  }
  /** A sandboxed session's mark, and its violations (refused connections, secrets' sentinels sent elsewhere). */
  // The conflict radar: another live session of the same repository edited the same file (text nodes only).
  function overlapMarks(r) {
    if (!r.overlaps || !r.overlaps.length) return [];
    const m = el("span", "badge overlap", `overlap: ${[...new Set(r.overlaps.map((o) => o.file))].join(", ")}`);
    m.title = r.overlaps.map((o) => `${o.file} is also edited by ${o.session_id}`).join("\n");
    return [m];
  }
  function sandboxMarks(r) {
    if (!r.sandboxed) return [];
    const n = r.sandbox_violations || 0;
    const m = el("span", n ? "sandbox violations" : "sandbox", n ? ` sandbox: ${n} violation${n > 1 ? "s" : ""}` : " sandboxed");
    m.title = n
      ? "refused connections and secrets' sentinels sent to other hosts (list_sessions sandbox_violations)"
      : "runs in the sandbox";
    return [m];
  }
  setInterval(() => document.querySelectorAll("td.active").forEach((td) => (td.textContent = ago(td.dataset.iso))), 10_000);

  // ------------------------------------------------------------------ one session
  function showStatus(r) {
    const s = $("#s-status");
    s.textContent =
      r.status === "limited" && r.limit ? `limited until ${new Date(r.limit.resets_at).toLocaleTimeString()}` : r.status;
    s.className = `status ${r.status}`;
    const p = r.pending_permission;
    $("#permission").hidden = !p;
    if (p) {
      $("#p-tool").textContent = p.tool_name;
      $("#p-input").textContent = JSON.stringify(p.tool_input, null, 2);
    }
    // A screen that waits for an answer: one button per choice it lists (answer_prompt).
    const b = r.status === "blocked" ? r.blocked : null;
    $("#blocked").hidden = !b;
    if (b) {
      $("#b-kind").textContent = b.kind;
      $("#b-text").textContent = b.text;
      $("#b-choices").replaceChildren(
        ...(b.choices || []).map((label, i) => {
          const btn = el("button", "", `${i + 1}. ${label}`);
          btn.type = "button";
          btn.addEventListener("click", () =>
            act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/answer`, { choice: i + 1 })),
          );
          return btn;
        }),
      );
    }
    $("#ended").hidden = !ENDED.has(r.status);
    showMarks(r);
    if (CS.onSession) CS.onSession(r);
    unseen.delete(r.session_id);
    const row = rows.get(r.session_id);
    if (row) renderRow(row);
  }
  // The list's team marks (lead, shutdown requested: <reason>), and next to a shutdown request the way to grant it: End it is Kill.
  function showMarks(r) {
    const marks = teamMarks(r);
    if (r.shutdown_requested) {
      const end = el("button", "danger", "End it");
      end.type = "button";
      end.id = "end-it";
      end.title = "Kill this session, as it asked (kill_session)";
      end.addEventListener("click", killCurrent);
      marks.push(end);
    }
    $("#s-marks").replaceChildren(...marks);
  }
  function showScreen(text) {
    const lines = text.split("\n");
    const cols = Math.max(80, ...lines.map((l) => l.length));
    if (!term) {
      term = new Terminal({
        cols,
        rows: Math.max(10, lines.length),
        convertEol: true,
        disableStdin: true,
        fontSize: 13,
        scrollback: 0,
      });
      term.open($("#terminal"));
    }
    if (term.cols !== cols || term.rows < lines.length) term.resize(cols, Math.max(term.rows, lines.length));
    term.reset();
    term.write(lines.join("\r\n"));
  }
  function openSession(id) {
    if (sessionFeed) sessionFeed.close();
    current = { session_id: id };
    // Looked at: it no longer counts as finished-while-away.
    if (unseen.delete(id) && rows.get(id)) renderRow(rows.get(id));
    $("#s-id").textContent = id;
    $("#transcript").replaceChildren();
    $("#turns tbody").replaceChildren();
    $("#budget").textContent = "";
    $("#error").textContent = "";
    $("#s-marks").replaceChildren();
    if (term) term.reset();
    sessionFeed = new EventSource(`/api/sessions/${encodeURIComponent(id)}/events`);
    sessionFeed.addEventListener("session", (e) => {
      current = JSON.parse(e.data);
      $("#s-cwd").textContent = current.cwd;
      showStatus(current);
    });
    sessionFeed.addEventListener("change", (e) => {
      const c = JSON.parse(e.data);
      Object.assign(current, c);
      if (c.pending_permission === null) delete current.pending_permission;
      if (c.blocked === null) delete current.blocked;
      if (c.shutdown_requested === null) delete current.shutdown_requested;
      if (c.limit === null) delete current.limit;
      showStatus(current);
    });
    sessionFeed.addEventListener("screen", (e) => showScreen(JSON.parse(e.data).text));
    sessionFeed.addEventListener("transcript", (e) => {
      for (const it of JSON.parse(e.data)) $("#transcript").appendChild(el("div", `msg ${it.role}`, it.text));
    });
    sessionFeed.addEventListener("gone", () => ($("#error").textContent = "No such session."));
  }
  async function act(fn) {
    $("#error").textContent = "";
    try {
      await fn();
    } catch (e) {
      $("#error").textContent = e.message;
    }
  }
  $("#send").addEventListener("submit", (e) => {
    e.preventDefault();
    const message = $("#message").value;
    if (!message.trim()) return;
    act(async () => {
      await post(`/api/sessions/${encodeURIComponent(current.session_id)}/send`, { message });
      $("#message").value = "";
    });
  });
  $("#interrupt").addEventListener("click", () =>
    act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/interrupt`)),
  );
  function killCurrent() {
    if (confirm(`Kill session ${current.session_id}?`))
      act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/kill`));
  }
  $("#kill").addEventListener("click", killCurrent);
  for (const [sel, fork] of [
    ["#resume", false],
    ["#fork", true],
    ["#fork-live", true],
  ]) {
    $(sel).addEventListener("click", () =>
      act(async () => {
        const message = $("#message").value.trim() ? $("#message").value : undefined;
        const r = await post(`/api/sessions/${encodeURIComponent(current.session_id)}/resume`, {
          fork,
          ...(message ? { message } : {}),
        });
        $("#message").value = "";
        // A fork is a new session of its own.
        if (r.session_id === current.session_id) openSession(r.session_id);
        else location.hash = `#/s/${encodeURIComponent(r.session_id)}`;
      }),
    );
  }
  for (const b of document.querySelectorAll("#permission button")) {
    b.addEventListener("click", () =>
      act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/respond`, { decision: b.dataset.decision })),
    );
  }
  $("#logout").addEventListener("click", () =>
    post("/logout")
      .catch(() => {})
      .finally(() => (location.href = "/login")),
  );

  // More pages (history.js): { match: RegExp, view: "#id", open(match) }.
  const CS = (window.CS = { $, el, post, act, teamMarks, routes: [], rows, current: () => current });
  function route() {
    const m = /^#\/s\/(.+)$/.exec(location.hash);
    const starting = location.hash === "#/new";
    const other = CS.routes.map((r) => [r, r.match.exec(location.hash)]).find(([, x]) => x);
    for (const r of CS.routes) $(r.view).hidden = !other || other[0] !== r;
    $("#list-view").hidden = Boolean(m) || starting || Boolean(other);
    $("#session-view").hidden = !m;
    $("#start-view").hidden = !starting;
    if (other) other[0].open(other[1]);
    if (starting) openStart();
    if (m) openSession(decodeURIComponent(m[1]));
    else if (sessionFeed) {
      sessionFeed.close();
      sessionFeed = null;
    }
  }

  // ------------------------------------------------------------------ start a session
  function options(sel, values, keepFirst) {
    const list = $(sel);
    const first = keepFirst ? [list.firstElementChild] : [];
    list.replaceChildren(
      ...first,
      ...values.map((v) => {
        const o = el("option", "", v);
        o.value = v;
        return o;
      }),
    );
  }
  async function openStart() {
    $("#start-error").textContent = "";
    const r = await fetch("/api/start-options");
    const o = await r.json().catch(() => ({}));
    if (!r.ok) return ($("#start-error").textContent = (o.error && o.error.message) || `HTTP ${r.status}`);
    options("#cwd-options", [...o.roots, ...o.recent]);
    options("#f-mode", o.permission_modes, true);
    options("#f-backend", o.backends, true);
    options("#team-options", o.teams);
    options("#node-options", ["local", "auto", ...o.nodes]);
    $("#roots-note").textContent = o.roots.length
      ? `Allowed: ${o.roots.join(", ")} and the folders inside them.`
      : "The operator allows no folders (CLAUDE_SESSIONS_WEB_ROOTS): the page cannot start sessions.";
    if (!$("#f-cwd").value && o.roots.length) $("#f-cwd").value = o.recent[0] || o.roots[0];
  }
  $("#start").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("#start-error").textContent = "";
    const v = (id) => $(id).value;
    const body = {
      cwd: v("#f-cwd"),
      prompt: v("#f-prompt"),
      model: v("#f-model"),
      permission_mode: v("#f-mode"),
      backend: v("#f-backend"),
      node: v("#f-node"),
      team_name: v("#f-team"),
      teammate_name: v("#f-teammate"),
      worktree: $("#f-worktree").checked,
      sandbox: v("#f-sandbox"),
    };
    const btn = $("#start button[type=submit]");
    btn.disabled = true;
    btn.textContent = "Starting…";
    try {
      const r = await post("/api/start", body);
      $("#f-prompt").value = "";
      location.hash = `#/s/${encodeURIComponent(r.session_id)}`;
    } catch (err) {
      $("#start-error").textContent = err.message;
    } finally {
      btn.disabled = false;
      btn.textContent = "Start";
    }
  });

  // ------------------------------------------------------------------ needs you
  const viewing = (id) => !document.hidden && current && current.session_id === id && !$("#session-view").hidden;
  function noticeChange(before, c) {
    const id = c.session_id;
    const was = before.status;
    const now = c.status || was;
    let why = null;
    if (now !== was && now === "waiting_for_permission")
      why = `waits for permission${c.pending_permission ? `: ${c.pending_permission.tool_name}` : ""}`;
    else if (now !== was && now === "blocked") why = `is blocked${c.blocked ? `: ${c.blocked.kind}` : ""}`;
    else if (now !== was && now === "error") why = "failed";
    else if (now !== was && now === "dead") why = "ended";
    // A turn ended: the count went up (a short turn's busy and idle may come in one batch), or the status says so.
    else if (
      (now === "idle" || now === "ready") &&
      ((typeof c.turn_count === "number" && c.turn_count > (before.turn_count ?? 0)) ||
        was === "busy" ||
        was === "waiting_for_permission" ||
        was === "blocked")
    )
      why = "finished its turn";
    if (!why) return;
    if (!needsAnswer({ ...before, ...c }) && !viewing(id)) unseen.add(id);
    if (viewing(id)) return;
    if (window.Notification && Notification.permission === "granted") {
      const n = new Notification(`claude-sessions: ${id} ${why}`, { body: before.cwd || "", tag: `cs-${id}` });
      n.onclick = () => {
        window.focus();
        location.hash = `#/s/${encodeURIComponent(id)}`;
      };
    }
  }
  function countNeeds() {
    let n = 0;
    for (const r of rows.values()) if (needsAnswer(r) || unseen.has(r.session_id)) n++;
    $("#needs-count").textContent = String(n);
    document.title = n ? `(${n}) claude-sessions` : "claude-sessions";
  }
  function nextNeeding() {
    const ids = [...rows.values()].filter((r) => needsAnswer(r) || unseen.has(r.session_id)).map((r) => r.session_id);
    if (!ids.length) return;
    const at = current ? ids.indexOf(current.session_id) : -1;
    location.hash = `#/s/${encodeURIComponent(ids[(at + 1) % ids.length])}`;
  }
  $("#needs-filter").addEventListener("change", (e) => document.body.classList.toggle("only-needs", e.target.checked));
  if (window.Notification && Notification.permission === "default") {
    $("#notify").hidden = false;
    $("#notify").addEventListener("click", () =>
      Notification.requestPermission().then(() => ($("#notify").hidden = Notification.permission !== "default")),
    );
  }
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName)) return;
    const onSession = !$("#session-view").hidden && current;
    if (e.key === "n") nextNeeding();
    else if (onSession && current.pending_permission && (e.key === "a" || e.key === "d")) {
      const decision = e.key === "a" ? "allow" : "deny";
      act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/respond`, { decision }));
    } else return;
    e.preventDefault();
  });
  document.addEventListener("visibilitychange", () => {
    const r = current && !document.hidden && unseen.delete(current.session_id) ? rows.get(current.session_id) : null;
    if (r) renderRow(r);
  });

  window.addEventListener("hashchange", route);
  fetch("/api/me")
    .then((r) => (r.status === 401 ? (location.href = "/login") : r.json()))
    .then((j) => {
      csrf = j && j.csrf;
      openList();
      route();
    });
})();
