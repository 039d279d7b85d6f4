// The web view's fan-out page (issue 34): the form calls fan_out (POST /api/fan-out, in a folder the operator allows),
// shows its progress lines as they come, then the ranked table with a Merge button per attempt (merge_worktree into
// the branch the attempts started from, through the merge queue).
"use strict";
(function () {
  const CS = window.CS;
  if (!CS) return;
  const { $, el, post } = CS;

  async function openFanOut() {
    $("#fo-error").textContent = "";
    const r = await fetch("/api/start-options");
    const o = await r.json().catch(() => ({}));
    if (!r.ok) return ($("#fo-error").textContent = (o.error && o.error.message) || `HTTP ${r.status}`);
    $("#fo-cwd-options").replaceChildren(...[...o.roots, ...o.recent].map((v) => Object.assign(el("option"), { value: v })));
    $("#fo-mode").replaceChildren(
      $("#fo-mode").firstElementChild,
      ...o.permission_modes.map((v) => Object.assign(el("option", "", v), { value: v })),
    );
    $("#fo-roots").textContent = o.roots.length
      ? `Allowed: ${o.roots.join(", ")} and the folders inside them. The repository's HEAD must be clean: every session starts from it in a worktree of its own.`
      : "The operator allows no folders (CLAUDE_SESSIONS_WEB_ROOTS): the page cannot fan out.";
    if (!$("#fo-cwd").value && o.roots.length) $("#fo-cwd").value = o.recent[0] || o.roots[0];
  }
  CS.routes.push({ match: /^#\/fan-out$/, view: "#fan-out-view", open: () => void openFanOut() });

  const money = (v) => (typeof v === "number" ? `$${v.toFixed(4)}` : "");
  function row(a) {
    const tr = el("tr");
    tr.dataset.id = a.session_id;
    const link = el("a", "", a.session_id);
    link.href = `#/s/${encodeURIComponent(a.session_id)}`;
    const outcome = el("td", `outcome ${a.outcome}`, a.reason ? `${a.outcome}: ${a.reason}` : a.outcome);
    const checks = el(
      "td",
      a.checks_total && a.checks_passed === a.checks_total ? "passed" : a.checks_total ? "error" : "muted",
      `${a.checks_passed}/${a.checks_total}`,
    );
    checks.title = a.checks
      .map((c) => `${c.name}: ${c.passed ? "passed" : c.timed_out ? "timed out" : `exit ${c.exit_code}`}`)
      .join("\n");
    const merge = el("button", "merge", "Merge");
    merge.type = "button";
    const said = el("span", "merged");
    said.setAttribute("role", "status");
    merge.addEventListener("click", async () => {
      merge.disabled = true;
      said.className = "merged";
      said.textContent = " Merging…";
      try {
        const r = await post(`/api/sessions/${encodeURIComponent(a.session_id)}/merge`, {});
        if (r.merged)
          said.textContent = ` Merged into ${r.target}: ${r.target_before.slice(0, 8)} → ${r.target_after.slice(0, 8)}.`;
        else {
          said.className = "merged error";
          said.textContent = r.conflicts
            ? ` Not merged: conflicts in ${r.conflicts.join(", ")}. ${r.target} is unchanged.`
            : ` Not merged: ${r.reason}`;
        }
      } catch (e) {
        said.className = "merged error";
        said.textContent = ` ${e.message}`;
      } finally {
        merge.disabled = false;
      }
    });
    const act = el("td");
    act.append(merge, said);
    const who = el("td");
    who.append(link);
    tr.append(
      el("td", "", String(a.rank)),
      who,
      el("td", "", a.model || ""),
      outcome,
      checks,
      el("td", "", `${a.diff.files} files +${a.diff.added} −${a.diff.removed}`),
      el("td", "", money(a.cost_usd)),
      el("td", "", `${(a.duration_ms / 1000).toFixed(1)}s`),
      Object.assign(el("td", "prompt", a.summary), { title: a.summary }),
      act,
    );
    return tr;
  }

  function show(r) {
    $("#fo-summary").textContent =
      `${r.attempts.length} attempt(s) from ${r.base_commit.slice(0, 12)} in ${r.repo}; checks: ${r.checks_source}. Best first.`;
    $("#fo-table tbody").replaceChildren(...r.attempts.map(row));
    $("#fo-table").hidden = false;
  }

  $("#fan").addEventListener("submit", async (e) => {
    e.preventDefault();
    const v = (id) => $(id).value.trim();
    const models = v("#fo-models")
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean);
    const body = {
      cwd: v("#fo-cwd"),
      prompt: $("#fo-prompt").value,
      ...(models.length ? { models } : { n: Number(v("#fo-n") || 3) }),
      ...(v("#fo-mode") ? { permission_mode: v("#fo-mode") } : {}),
      timeout_ms: Math.round(Number(v("#fo-deadline") || 30) * 60_000),
      ...($("#fo-trust").checked ? { trust_workspace: true } : {}),
    };
    const btn = $("#fan button[type=submit]");
    $("#fo-error").textContent = "";
    $("#fo-summary").textContent = "Starting…";
    $("#fo-progress").replaceChildren();
    $("#fo-table").hidden = true;
    btn.disabled = true;
    try {
      const res = await fetch("/api/fan-out", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": (await csrfToken()) || "" },
        body: JSON.stringify(body),
      });
      if (res.status === 401) location.href = "/login";
      if (!res.ok) {
        const j = await res.json().catch(() => ({}));
        throw new Error(
          j.error
            ? `${j.error.code ? j.error.code + ": " : ""}${j.error.message}${j.error.suggestion ? " " + j.error.suggestion : ""}`
            : `HTTP ${res.status}`,
        );
      }
      // One JSON object a line: progress as it comes, then the result or the error.
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (value) buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const m = JSON.parse(line);
          if (m.progress) {
            $("#fo-progress").append(el("li", "", m.progress.message || `${m.progress.progress}/${m.progress.total}`));
            $("#fo-summary").textContent = `Working: ${m.progress.progress} of ${m.progress.total} steps.`;
          } else if (m.result) show(m.result);
          else if (m.error)
            throw new Error(`${m.error.code}: ${m.error.message}${m.error.suggestion ? " " + m.error.suggestion : ""}`);
        }
        if (done) break;
      }
    } catch (err) {
      $("#fo-summary").textContent = "";
      $("#fo-error").textContent = err.message;
    } finally {
      btn.disabled = false;
    }
  });

  // The page's CSRF token (app.js keeps its own; the stream is read here, so this page asks for it once).
  let token = null;
  async function csrfToken() {
    if (token) return token;
    const r = await fetch("/api/me")
      .then((x) => x.json())
      .catch(() => ({}));
    token = r.csrf || null;
    return token;
  }
})();
