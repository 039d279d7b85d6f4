// The web view's history pages: search across conversations, one conversation paged both ways (resume or fork it),
// a session's turns with their cost, and the cost page (per day, per team, per session, per account). Every read is one of the
// read-only history tools through /api/read/<tool>; user text is only ever set with textContent.
"use strict";
(function () {
  const CS = window.CS;
  if (!CS) return;
  const { $, el, post, act } = CS;
  const money = (n) => (typeof n === "number" ? `$${n.toFixed(4)}` : n === null ? "?" : "");
  const read = (tool, args) => post(`/api/read/${tool}`, args);
  const when = (iso) => (iso ? iso.slice(0, 16).replace("T", " ") : "");

  /** A search snippet: the index marks each match as **match**; shown as <mark> elements (DOM nodes, never HTML). */
  function snippet(text, terms) {
    const parts = text.split(/\*\*(.+?)\*\*/);
    if (parts.length === 1) return highlighted(text, terms);
    const frag = document.createDocumentFragment();
    parts.forEach((p, i) => (i % 2 ? frag.append(el("mark", "", p)) : p && frag.append(p)));
    return frag;
  }

  /** `text` with each term wrapped in <mark>, as DOM nodes (never HTML). */
  function highlighted(text, terms) {
    const frag = document.createDocumentFragment();
    const words = (terms || []).map((t) => String(t).replace(/^"|"$/g, "").toLowerCase()).filter(Boolean);
    const lower = text.toLowerCase();
    if (!words.length || lower.length !== text.length) {
      frag.append(text);
      return frag;
    }
    let i = 0;
    while (i < text.length) {
      let at = -1;
      let len = 0;
      for (const w of words) {
        const k = lower.indexOf(w, i);
        if (k >= 0 && (at < 0 || k < at)) [at, len] = [k, w.length];
      }
      if (at < 0) {
        frag.append(text.slice(i));
        break;
      }
      if (at > i) frag.append(text.slice(i, at));
      frag.append(el("mark", "", text.slice(at, at + len)));
      i = at + len;
    }
    return frag;
  }

  // ---------------------------------------------------------------- search
  let lastQuery = "";
  async function search(query) {
    lastQuery = query;
    $("#search-note").textContent = "Searching…";
    $("#hits").replaceChildren();
    try {
      const r = await read("search_conversations", { query, limit: 50 });
      $("#search-note").textContent =
        `${r.results.length} conversation${r.results.length === 1 ? "" : "s"}${r.more_matches ? " (more matches: narrow the words)" : ""}${r.indexing ? " · still indexing" : ""}`;
      for (const h of r.results) {
        const li = el("li", "hit");
        const a = el("a", "", h.title || h.claude_session_id);
        a.href = `#/c/${encodeURIComponent(h.claude_session_id)}/${h.item.index}`;
        li.append(
          a,
          " ",
          el("small", "muted", `${h.cwd || ""} · ${when(h.last_activity)} · ${h.matches} match${h.matches === 1 ? "" : "es"}`),
        );
        const p = el("p", "snippet");
        p.append(snippet(h.snippet, r.terms));
        li.append(p);
        $("#hits").append(li);
      }
    } catch (e) {
      $("#search-note").textContent = e.message;
    }
  }
  $("#search").addEventListener("submit", (e) => {
    e.preventDefault();
    const q = $("#q").value.trim();
    if (q) location.hash = `#/history/${encodeURIComponent(q)}`;
  });
  CS.routes.push({
    match: /^#\/history(?:\/(.*))?$/,
    view: "#history-view",
    open(m) {
      const q = m[1] ? decodeURIComponent(m[1]) : "";
      $("#q").value = q;
      if (q && q !== lastQuery) search(q);
      if (!q) $("#q").focus();
    },
  });

  // ---------------------------------------------------------------- one conversation
  let conv = null; // { id, info, prev, next, hit }
  const cursorAt = (index) =>
    btoa(JSON.stringify(["after", Math.max(0, index - 3)]))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
  function item(it) {
    const d = el("div", `msg ${it.role}${conv && it.index === conv.hit ? " hit" : ""}`);
    d.dataset.index = String(it.index);
    d.append(el("small", "muted", `${it.role} · ${when(it.time)}${it.truncated ? " · cut" : ""}`), el("div", "", it.text));
    for (const t of it.tools || []) d.append(el("code", "tool", `${t.name} ${t.input}`));
    return d;
  }
  async function page(args, where) {
    const r = await read("get_conversation", { claude_session_id: conv.id, limit: 20, ...args });
    conv.info = r.conversation;
    $("#c-title").textContent = r.conversation.title || conv.id;
    $("#c-cwd").textContent = `${r.conversation.cwd || ""} · ${r.conversation.turns} turns · ${money(r.conversation.cost_usd)}`;
    const nodes = r.items.map(item);
    if (where === "before") {
      $("#c-items").prepend(...nodes);
      conv.prev = r.prev_cursor;
    } else if (where === "after") {
      $("#c-items").append(...nodes);
      conv.next = r.has_more_after ? r.next_cursor : null;
    } else {
      $("#c-items").replaceChildren(...nodes);
      conv.prev = r.prev_cursor;
      conv.next = r.has_more_after ? r.next_cursor : null;
    }
    $("#c-before").hidden = !conv.prev;
    $("#c-after").hidden = !conv.next;
  }
  CS.routes.push({
    match: /^#\/c\/([^/]+)(?:\/(\d+))?$/,
    view: "#conversation-view",
    open(m) {
      conv = { id: decodeURIComponent(m[1]), hit: m[2] ? Number(m[2]) : null };
      $("#c-error").textContent = "";
      page(conv.hit ? { cursor: cursorAt(conv.hit) } : { from: "end" }).then(
        () => document.querySelector("#c-items .hit")?.scrollIntoView({ block: "center" }),
        (e) => ($("#c-error").textContent = e.message),
      );
    },
  });
  $("#c-before").addEventListener(
    "click",
    () => conv.prev && page({ cursor: conv.prev }, "before").catch((e) => ($("#c-error").textContent = e.message)),
  );
  $("#c-after").addEventListener(
    "click",
    () => conv.next && page({ cursor: conv.next }, "after").catch((e) => ($("#c-error").textContent = e.message)),
  );
  for (const [sel, fork] of [
    ["#c-resume", false],
    ["#c-fork", true],
  ]) {
    $(sel).addEventListener("click", async () => {
      $("#c-error").textContent = "";
      try {
        const i = conv.info;
        // A conversation this server ran resumes its session; another one is adopted (in an allowed folder only).
        const r = i.session_id
          ? await post(`/api/sessions/${encodeURIComponent(i.session_id)}/resume`, { fork })
          : await post("/api/adopt", { claude_session_id: conv.id, cwd: i.cwd || "", fork });
        location.hash = `#/s/${encodeURIComponent(r.session_id)}`;
      } catch (e) {
        $("#c-error").textContent = e.message;
      }
    });
  }

  // ---------------------------------------------------------------- a session's turns and budget
  let turnsTimer = null;
  let reviewed = null;
  CS.onSession = (r) => {
    $("#review").hidden = !r.branch;
    if (r.branch && reviewed !== r.session_id) void showReview(r.session_id);
    if (!r.branch) reviewed = null;
    clearTimeout(turnsTimer);
    turnsTimer = setTimeout(() => showTurns(r.session_id), 300);
  };
  let costTimer = null;
  CS.onTotals = (row) => {
    const cur = CS.current();
    if (cur && cur.session_id === row.session_id && !$("#session-view").hidden) CS.onSession(cur);
    if (!$("#cost-view").hidden) {
      clearTimeout(costTimer);
      costTimer = setTimeout(() => void showCost(), 300);
    }
  };
  async function showTurns(id) {
    const r = await read("get_execution_history", { session_id: id, limit: 50 }).catch(() => null);
    if (!r || !CS.current() || CS.current().session_id !== id) return;
    $("#turns tbody").replaceChildren(
      ...r.executions.map((x) => {
        const tr = el("tr");
        tr.append(
          el("td", "", when(x.started_at)),
          el("td", "", `${(x.duration_ms / 1000).toFixed(1)}s`),
          el("td", `outcome ${x.outcome}`, x.outcome),
          el("td", "", money(x.cost_usd)),
          el("td", "prompt", x.prompt.slice(0, 200)),
        );
        tr.title = x.error || x.response || "";
        return tr;
      }),
    );
    const row = CS.rows.get(id) || CS.current();
    const spent = row && typeof row.total_cost_usd === "number" ? row.total_cost_usd : null;
    $("#budget").textContent =
      row && typeof row.max_budget_usd === "number"
        ? `Budget: ${money(spent)} of $${row.max_budget_usd} spent, $${Math.max(0, row.max_budget_usd - (spent || 0)).toFixed(4)} left.`
        : spent !== null
          ? `Cost so far: ${money(spent)}.`
          : "";
  }

  // ---------------------------------------------------------------- a worktree session's changes (read-only)
  async function showReview(id) {
    reviewed = id;
    const res = await fetch(`/api/sessions/${encodeURIComponent(id)}/review`);
    const r = await res.json().catch(() => ({}));
    if (!CS.current() || CS.current().session_id !== id) return;
    if (!res.ok) {
      $("#r-files").replaceChildren(el("li", "error", r.error ? `${r.error.code}: ${r.error.message}` : `HTTP ${res.status}`));
      $("#r-diff").replaceChildren();
      return;
    }
    $("#r-branch").textContent = r.branch;
    $("#r-base").textContent = r.base;
    $("#r-ahead").textContent = `${r.ahead} ahead, ${r.behind} behind ${r.base}`;
    const files = [...r.files.map((f) => [f.status, f.path]), ...r.untracked.map((p) => ["?", p])];
    $("#r-files").replaceChildren(
      ...(files.length
        ? files.map(([st, p]) => el("li", `file st-${st === "?" ? "U" : st}`, `${st} ${p}`))
        : [el("li", "muted", "No changes.")]),
    );
    const lines = r.diff.split("\n").slice(0, 5000);
    $("#r-diff").replaceChildren(
      ...lines.map((l) =>
        el(
          "span",
          l.startsWith("+") && !l.startsWith("+++")
            ? "add"
            : l.startsWith("-") && !l.startsWith("---")
              ? "del"
              : l.startsWith("@@")
                ? "hunk"
                : "",
          l + "\n",
        ),
      ),
      ...(r.truncated || lines.length < r.diff.split("\n").length
        ? [el("span", "muted", "… (cut: the diff is longer than the page shows)")]
        : []),
    );
  }
  $("#r-refresh").addEventListener("click", () => CS.current() && void showReview(CS.current().session_id));
  // The merge button (issue 34): merge_worktree through the page's action; a conflict or a failed check says why.
  $("#r-merge").addEventListener("click", async () => {
    const cur = CS.current();
    if (!cur) return;
    const out = $("#r-merged");
    out.className = "";
    out.textContent = "Merging…";
    $("#r-merge").disabled = true;
    try {
      const r = await post(`/api/sessions/${encodeURIComponent(cur.session_id)}/merge`, { strategy: $("#r-strategy").value });
      if (r.merged)
        out.textContent = `Merged into ${r.target}: ${r.target_before.slice(0, 8)} → ${r.target_after.slice(0, 8)}${r.checks ? ` (${r.checks.length} check(s) passed)` : ""}.`;
      else {
        out.className = "error";
        out.textContent = r.conflicts
          ? `Not merged: conflicts in ${r.conflicts.join(", ")}. ${r.target} is unchanged.`
          : `Not merged: ${r.reason}`;
      }
      void showReview(cur.session_id);
    } catch (e) {
      out.className = "error";
      out.textContent = e.message;
    } finally {
      $("#r-merge").disabled = false;
    }
  });

  // ---------------------------------------------------------------- cost
  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  /** Bars of cost per day, the last `days` days (plain SVG). */
  function chart(byDay, days) {
    const keys = [];
    for (let i = days - 1; i >= 0; i--) keys.push(new Date(Date.now() - i * 86_400_000).toISOString().slice(0, 10));
    const max = Math.max(0.0001, ...keys.map((k) => byDay.get(k) || 0));
    const w = 24;
    const h = 120;
    const s = svg("svg", {
      viewBox: `0 0 ${keys.length * w} ${h + 30}`,
      class: "chart",
      role: "img",
      "aria-label": "cost per day",
    });
    keys.forEach((k, i) => {
      const v = byDay.get(k) || 0;
      const bh = Math.round((v / max) * h);
      const bar = svg("rect", {
        x: i * w + 3,
        y: h - bh,
        width: w - 6,
        height: Math.max(bh, v > 0 ? 1 : 0),
        class: "bar",
        "data-day": k,
        "data-cost": v.toFixed(6),
      });
      bar.append(svg("title", {}, `${k}: $${v.toFixed(4)}`));
      s.append(bar, svg("text", { x: i * w + w / 2, y: h + 14, "text-anchor": "middle", class: "axis" }, k.slice(8)));
    });
    return s;
  }
  async function showCost() {
    const rows = [...CS.rows.values()];
    const teams = new Map();
    let total = 0;
    for (const r of rows) {
      const c = typeof r.total_cost_usd === "number" ? r.total_cost_usd : 0;
      total += c;
      const t = teams.get(r.team_name || "(no team)") || { n: 0, cost: 0 };
      t.n++;
      t.cost += c;
      teams.set(r.team_name || "(no team)", t);
    }
    $("#cost-total").textContent = `All sessions: $${total.toFixed(4)}`;
    $("#cost-teams tbody").replaceChildren(
      ...[...teams]
        .sort((a, b) => b[1].cost - a[1].cost)
        .map(([name, t]) => {
          const tr = el("tr");
          tr.append(el("td", "", name), el("td", "", String(t.n)), el("td", "cost", `$${t.cost.toFixed(4)}`));
          return tr;
        }),
    );
    $("#cost-sessions tbody").replaceChildren(
      ...rows
        .filter((r) => typeof r.total_cost_usd === "number" || typeof r.max_budget_usd === "number")
        .sort((a, b) => (b.total_cost_usd || 0) - (a.total_cost_usd || 0))
        .map((r) => {
          const tr = el("tr");
          tr.dataset.session = r.session_id;
          const link = el("a", "", r.session_id);
          link.href = `#/s/${encodeURIComponent(r.session_id)}`;
          const left =
            typeof r.max_budget_usd === "number"
              ? `$${Math.max(0, r.max_budget_usd - (r.total_cost_usd || 0)).toFixed(4)} of $${r.max_budget_usd}`
              : "";
          const id = el("td");
          id.append(link);
          tr.append(id, el("td", "", r.team_name || ""), el("td", "cost", money(r.total_cost_usd)), el("td", "budget", left));
          return tr;
        }),
    );
    void showAccounts();
    const ex = await read("get_execution_history", { limit: 10000 }).catch(() => ({ executions: [] }));
    const byDay = new Map();
    for (const x of ex.executions)
      if (typeof x.cost_usd === "number")
        byDay.set(x.ended_at.slice(0, 10), (byDay.get(x.ended_at.slice(0, 10)) || 0) + x.cost_usd);
    $("#cost-chart").replaceChildren(chart(byDay, 14));
  }
  /** The operator's accounts (issue 33): sessions, limited or not, and each usage window as the CLI last reported it. */
  async function showAccounts() {
    const r = await fetch("/api/accounts")
      .then((x) => x.json())
      .catch(() => ({ accounts: [] }));
    const win = (w) => (w ? `${w.used_percent}% used, resets ${when(w.resets_at)}` : "");
    $("#cost-accounts-note").textContent = r.error
      ? r.error
      : r.accounts.length
        ? ""
        : "No accounts (the operator's CLAUDE_SESSIONS_ACCOUNTS).";
    $("#cost-accounts tbody").replaceChildren(
      ...r.accounts.map((a) => {
        const tr = el("tr", "");
        tr.dataset.account = a.name;
        tr.append(
          el("td", "", a.name),
          el("td", "", String(a.sessions.length)),
          el("td", "", a.limited_until ? `limited until ${when(a.limited_until)}` : "room"),
          el("td", "window", win(a.windows && a.windows.five_hour)),
          el("td", "window", win(a.windows && a.windows.seven_day)),
        );
        return tr;
      }),
    );
  }
  CS.routes.push({ match: /^#\/cost$/, view: "#cost-view", open: () => void showCost() });

  // ---------------------------------------------------------------- teams: members with node and status; broadcast
  function showTeams() {
    const teams = new Map();
    for (const r of CS.rows.values())
      if (r.team_name) (teams.get(r.team_name) || teams.set(r.team_name, []).get(r.team_name)).push(r);
    $("#no-teams").hidden = teams.size > 0;
    $("#teams").replaceChildren(
      ...[...teams]
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(([name, members]) => {
          const sec = el("section", "team");
          sec.dataset.team = name;
          sec.append(
            el(
              "h3",
              "",
              `${name} (${members.filter((m) => !["dead", "error", "zombie"].includes(m.status)).length} live of ${members.length})`,
            ),
          );
          const table = el("table", "compact");
          for (const m of members) {
            const tr = el("tr");
            tr.dataset.member = m.session_id;
            const a = el("a", "", m.teammate_name || m.session_id);
            a.href = `#/s/${encodeURIComponent(m.session_id)}`;
            const who = el("td", "who");
            who.append(a, ...CS.teamMarks(m));
            tr.append(who, el("td", "", m.node || "local"), el("td", "", ""), el("td", "cost", money(m.total_cost_usd)));
            tr.children[2].append(el("span", `status ${m.status}`, m.status));
            table.append(tr);
          }
          const form = el("form", "broadcast tools");
          const input = el("input");
          input.placeholder = `Send to every live member of ${name}…`;
          input.required = true;
          const btn = el("button", "", "Broadcast");
          btn.type = "submit";
          const out = el("span", "muted");
          form.append(input, btn, out);
          form.addEventListener("submit", async (e) => {
            e.preventDefault();
            out.textContent = "";
            try {
              const r = await post(`/api/teams/${encodeURIComponent(name)}/broadcast`, { message: input.value });
              out.textContent = `sent to ${r.sent_count}${
                r.failed_count
                  ? `, ${r.failed_count} failed: ${r.results
                      .filter((x) => !x.message_sent)
                      .map((x) => `${x.session_id} ${x.error ? `${x.error.code}: ${x.error.message}` : ""}`)
                      .join("; ")}`
                  : ""
              }`;
              input.value = "";
            } catch (err) {
              out.textContent = err.message;
            }
          });
          sec.append(table, form);
          return sec;
        }),
    );
  }
  let teamsTimer = null;
  CS.onRows = () => {
    if ($("#teams-view").hidden) return;
    clearTimeout(teamsTimer);
    teamsTimer = setTimeout(showTeams, 200);
  };
  CS.routes.push({ match: /^#\/teams$/, view: "#teams-view", open: showTeams });
})();
