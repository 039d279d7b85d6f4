// The web view's schedules page (issue 37): each schedule with its next time and last runs, pause/resume/delete
// buttons and a small form that makes one. Every control is a schedule tool through /api/schedules/… (the same call
// path as the MCP tools); user text is only ever set with textContent.
"use strict";
(function () {
  const CS = window.CS;
  if (!CS) return;
  const { $, el, post } = CS;
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");
  const money = (n) => (typeof n === "number" ? ` $${n.toFixed(4)}` : "");
  let timer = null;

  function timing(s) {
    return s.every !== undefined ? `every ${s.every}` : s.cron !== undefined ? `cron ${s.cron}` : `at ${when(s.at)}`;
  }
  function target(s) {
    if (s.send_to)
      return s.send_to.session_id !== undefined
        ? `→ session ${s.send_to.session_id}`
        : `→ ${s.send_to.team_name} / ${s.send_to.teammate_name}`;
    return `new session in ${s.cwd}`;
  }
  function runsCell(s) {
    const td = el("td", "runs");
    for (const r of s.runs.slice(-3).reverse()) {
      const line = el("div", `run ${r.outcome}`);
      line.append(
        el("span", "outcome", r.outcome),
        ` ${when(r.started_at || r.due_at)}${typeof r.duration_ms === "number" ? ` · ${(r.duration_ms / 1000).toFixed(1)} s` : ""}${money(r.cost_usd)}`,
      );
      if (r.session_id) {
        const a = el("a", "", ` ${r.session_id}`);
        a.href = `#/s/${encodeURIComponent(r.session_id)}`;
        line.append(a);
      }
      if (r.reason) line.title = r.reason;
      td.append(line);
    }
    if (!s.runs.length) td.append(el("span", "muted", "no runs yet"));
    return td;
  }
  function button(text, cls, fn) {
    const b = el("button", cls, text);
    b.type = "button";
    b.addEventListener("click", fn);
    return b;
  }
  async function change(name, action) {
    $("#sc-error").textContent = "";
    try {
      await post(`/api/schedules/${encodeURIComponent(name)}/${action}`);
    } catch (e) {
      $("#sc-error").textContent = e.message;
    }
    await refresh();
  }
  function render(list) {
    $("#no-schedules").hidden = list.length > 0;
    $("#schedules tbody").replaceChildren(
      ...list.map((s) => {
        const tr = el("tr");
        tr.dataset.name = s.name;
        tr.dataset.state = s.paused ? "paused" : s.running ? "running" : "waiting";
        const state = s.paused ? "paused" : s.running ? "running" : s.next_at ? "waiting" : "done";
        const actions = el("td", "buttons");
        actions.append(
          s.paused
            ? button("Resume", "resume", () => change(s.name, "resume"))
            : button("Pause", "pause", () => change(s.name, "pause")),
          button("Delete", "danger delete", () => {
            if (confirm(`Delete schedule ${s.name}?`)) void change(s.name, "delete");
          }),
        );
        tr.append(
          el("td", "name", s.name),
          el("td", "", timing(s)),
          el("td", "target", target(s)),
          el("td", "next", s.next_at ? when(s.next_at) : "—"),
          el("td", "state", state),
          runsCell(s),
          actions,
        );
        return tr;
      }),
    );
  }
  async function refresh() {
    if ($("#schedules-view").hidden) return;
    try {
      render((await post("/api/schedules/list")).schedules);
    } catch (e) {
      $("#sc-error").textContent = e.message;
    }
  }
  function open() {
    $("#sc-error").textContent = "";
    const ids = [...CS.rows.values()].map((r) => r.session_id);
    $("#sc-session-options").replaceChildren(
      ...ids.map((id) => {
        const o = el("option");
        o.value = id;
        return o;
      }),
    );
    void refresh();
    clearInterval(timer);
    // The next times and runs change as the server's scheduler works: looked at again while the page shows.
    timer = setInterval(() => ($("#schedules-view").hidden ? clearInterval(timer) : void refresh()), 3000);
  }
  $("#sc-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("#sc-error").textContent = "";
    const v = (id) => $(id).value;
    const kind = v("#sc-kind");
    const body = {
      name: v("#sc-name"),
      [kind]: v("#sc-when"),
      prompt: v("#sc-prompt"),
      cwd: v("#sc-cwd"),
      session_id: v("#sc-session"),
      overlap: v("#sc-overlap"),
    };
    try {
      await post("/api/schedules/create", body);
      $("#sc-name").value = "";
      $("#sc-prompt").value = "";
      await refresh();
    } catch (err) {
      $("#sc-error").textContent = err.message;
    }
  });
  CS.routes.push({ match: /^#\/schedules$/, view: "#schedules-view", open });
})();
