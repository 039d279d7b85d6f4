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
  const needsAnswer = (r) => r.status === "waiting_for_permission" || r.status === "blocked" || Boolean(r.pending_permission) || Boolean(r.blocked);

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf || "" }, body: JSON.stringify(body || {}) });
    const j = await r.json().catch(() => ({}));
    if (r.status === 401) location.href = "/login";
    if (!r.ok) throw new Error((j.error && (j.error.message + (j.error.suggestion ? " " + j.error.suggestion : ""))) || `HTTP ${r.status}`);
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
    c[2].replaceChildren(el("span", `status ${r.status}`, r.status));
    c[3].textContent = [r.team_name, r.teammate_name].filter(Boolean).join(" / ");
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
    $("#empty").hidden = rows.size > 0;
  }
  function merge(change) {
    const r = rows.get(change.session_id);
    if (!r) return false;
    Object.assign(r, change);
    if (change.pending_permission === null) delete r.pending_permission;
    renderRow(r);
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
    });
    // A session this page has not seen: reopen the feed, which starts with a fresh snapshot.
    listFeed.addEventListener("change", (e) => merge(JSON.parse(e.data)) || openList());
  }
  setInterval(() => document.querySelectorAll("td.active").forEach((td) => (td.textContent = ago(td.dataset.iso))), 10_000);

  // ------------------------------------------------------------------ one session
  function showStatus(r) {
    const s = $("#s-status");
    s.textContent = r.status;
    s.className = `status ${r.status}`;
    const p = r.pending_permission;
    $("#permission").hidden = !p;
    if (p) {
      $("#p-tool").textContent = p.tool_name;
      $("#p-input").textContent = JSON.stringify(p.tool_input, null, 2);
    }
  }
  function showScreen(text) {
    const lines = text.split("\n");
    const cols = Math.max(80, ...lines.map((l) => l.length));
    if (!term) {
      term = new Terminal({ cols, rows: Math.max(10, lines.length), convertEol: true, disableStdin: true, fontSize: 13, scrollback: 0 });
      term.open($("#terminal"));
    }
    if (term.cols !== cols || term.rows < lines.length) term.resize(cols, Math.max(term.rows, lines.length));
    term.reset();
    term.write(lines.join("\r\n"));
  }
  function openSession(id) {
    if (sessionFeed) sessionFeed.close();
    current = { session_id: id };
    $("#s-id").textContent = id;
    $("#transcript").replaceChildren();
    $("#error").textContent = "";
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
  $("#interrupt").addEventListener("click", () => act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/interrupt`)));
  $("#kill").addEventListener("click", () => {
    if (confirm(`Kill session ${current.session_id}?`)) act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/kill`));
  });
  for (const b of document.querySelectorAll("#permission button")) {
    b.addEventListener("click", () => act(() => post(`/api/sessions/${encodeURIComponent(current.session_id)}/respond`, { decision: b.dataset.decision })));
  }
  $("#logout").addEventListener("click", () => post("/logout").catch(() => {}).finally(() => (location.href = "/login")));

  function route() {
    const m = /^#\/s\/(.+)$/.exec(location.hash);
    $("#list-view").hidden = Boolean(m);
    $("#session-view").hidden = !m;
    if (m) openSession(decodeURIComponent(m[1]));
    else if (sessionFeed) {
      sessionFeed.close();
      sessionFeed = null;
    }
  }
  window.addEventListener("hashchange", route);
  fetch("/api/me")
    .then((r) => (r.status === 401 ? (location.href = "/login") : r.json()))
    .then((j) => {
      csrf = j && j.csrf;
      openList();
      route();
    });
})();
