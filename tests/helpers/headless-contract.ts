/**
 * The contract suites (describe.each over contractBackends()) run on tmux and pty with the fake claude, which
 * draws an interactive screen and does not speak the Agent SDK's stream-json. Headless sessions run the real
 * CLI, so their side of each contract case lives in the real-CLI suites. This table says, for every contract
 * case by name, which headless test covers it, or why it does not apply; tests/unit/headless-contract.test.ts
 * fails when a contract case is missing here or names a test that does not exist.
 */
const E2E = "tests/e2e/headless.test.ts";
const TURNS = "tests/integration/headless-turns.test.ts";
const PERMS = "tests/integration/headless-permissions.test.ts";
const RESUME = "tests/integration/headless-resume.test.ts";

export type HeadlessCase = { covered_by: Array<[file: string, test: string]> } | { does_not_apply: string };

const same = (why: string): HeadlessCase => ({ does_not_apply: `the same code for every backend, before any backend is involved: ${why}` });

export const HEADLESS_CONTRACT: Record<string, HeadlessCase> = {
  // tests/integration/errors.test.ts
  "rejects bad input with INVALID_ARGUMENT, spawns nothing and changes no state": {
    covered_by: [[E2E, "headless-only options are refused on tmux, and doppler on headless, naming the backend that can"]],
  },
  "unknown sessions give SESSION_NOT_FOUND; an over-long or empty message is refused before typing": same("the registry and checkPrompt"),
  "max_turns is enforced by the orchestrator": {
    covered_by: [[E2E, "max_turns is the CLI's agentic limit and max_budget_usd stops a turn (error_subtype), the session goes on"]],
  },
  "MAX_CONCURRENT_SESSIONS: the fourth session gets LIMIT_REACHED": same("assertRoom under the store lock"),
  "CLAUDE_NOT_FOUND says where it looked": same("claudeBinary, before the runner"),
  "a claude that exits at start-up gives PROCESS_ERROR with what it printed": { does_not_apply: "the fake claude's start-up crash is a terminal screen; the headless engine's start-up failure (stderr tail in PROCESS_ERROR) needs a real CLI that fails, which the mock cannot make" },
  "first-run screens give STARTUP_BLOCKED with the way out; trust_workspace accepts the trust screen": {
    // No screens in stream-json mode; the server reads Claude's trust record itself and stops the same way.
    covered_by: [[E2E, "a folder Claude Code does not trust: STARTUP_BLOCKED and its SessionStart hook never ran (start and run_task); trust_workspace: true is the way out"]],
  },
  "bypassPermissions is refused unless the server allows it": same("checkPermissionMode"),
  "MAX_SESSION_DURATION ends a session that outlived it and leaves it resumable": same("the deadline calls kill_session, which the headless kill and resume tests cover"),
  // tests/integration/hostile.test.ts
  "every string argument of start_session and the prompt reach Claude byte-exact; nothing runs": {
    covered_by: [
      [RESUME, "env and MCP server env reach the child's environment only, never its argv"],
      [E2E, "prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)"],
    ],
  },
  "hostile messages arrive exactly, or are refused with INVALID_ARGUMENT and nothing typed; the session stays usable": {
    covered_by: [
      [E2E, "prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)"],
      [TURNS, "prompts arrive byte-exact at the API and in the UserPromptSubmit hook (no terminal in between)"],
    ],
  },
  "c. repeated text arrives whole or the call is an error, never a success for another prompt": {
    // No terminal and no paste in pieces: the SDK hands the prompt over whole.
    covered_by: [[E2E, "prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)"]],
  },
  "bash mode runs a command only with the operator's switch": { does_not_apply: "bash mode is a feature of the interactive screen; headless sessions refuse it (checked in the e2e parallel test)" },
  "log_file is a new file of the session's own: existing files, links, missing or foreign directories are refused": same("createOwnedFile, before the runner"),
  "env cannot choose the programs hooks and scripts run: such variables are refused, and allowed by the operator they still pick none": same(
    "checkEnv refuses the variables before the runner; a headless session's hooks are the same hookCommand (absolute paths, tests/unit/launch.test.ts)",
  ),
  "a script of the state directory that others could change is refused before it runs": same("assertOwnedScript, before the runner"),
  // tests/integration/lifecycle.test.ts
  "lists its tools with input and output schemas and honest annotations": same("tools/list"),
  "starts three sessions in parallel; each answers its own prompt; stream, list and kill work on each": {
    covered_by: [[E2E, "parallel starts and turns: each its own session, reply, usage and cost from the SDK; list and log work, screen is refused"]],
  },
  "stream_output with a cursor returns only what is new, and follow waits for it": same("sessions/output.ts reads output.log by offset; the headless host writes the SDK's messages there (log mode checked in the e2e parallel test)"),
  "wait_for_completion wakes on the Stop hook and reports progress while it waits": {
    covered_by: [[E2E, "run_task: the first turn's result and the ids to go on with; keep_session false ends it (resumable); progress is reported"]],
  },
  "a cancelled wait stops at once and leaves the session and server as they were": { covered_by: [[E2E, "run_task: cancelling the call ends the turn"]] },
  "keeps state.json private and in the spec's format": same("the store"),
  // tests/integration/secrets.test.ts
  "each session gets its own config's secrets through doppler run; only project and config are stored": { does_not_apply: "doppler is refused on headless (INVALID_ARGUMENT naming tmux and pty); secrets go in env" },
  "doppler's own failures give DOPPLER_ERROR with its message, not a timeout": { does_not_apply: "doppler is refused on headless" },
  "a missing doppler binary gives DOPPLER_ERROR with an install hint before anything is spawned": { does_not_apply: "doppler is refused on headless" },
  "a session without doppler never gets the server's DOPPLER_TOKEN (nor its HTTP token)": {
    covered_by: [["tests/unit/launch.test.ts", "the server's own secrets stay with it: DOPPLER_* only for a session under doppler run, never its HTTP token"]],
  },
  "no secret value or token appears in the state directory, event logs, raw logs, server logs, tool results or ps": {
    covered_by: [[RESUME, "env and MCP server env reach the child's environment only, never its argv"]],
  },
  // tests/integration/session-life.test.ts
  "reset_session: a new conversation in the same session, totals and turns go on; refused while busy": {
    covered_by: [["tests/e2e/session-life.test.ts", "headless: reset and compact go through the SDK as slash commands; a running session forks"]],
  },
  "compact_session types /compact with the checked instructions and the session goes on": {
    covered_by: [["tests/e2e/session-life.test.ts", "headless: reset and compact go through the SDK as slash commands; a running session forks"]],
  },
  "a fork of a running session is a new session with its own totals; the parent runs on with its own": {
    covered_by: [[E2E, "resume keeps the Claude session id and the history; fork branches it"]],
  },
  "kill_session {force: true} is an immediate SIGKILL: no SessionEnd (which SIGTERM gives)": { does_not_apply: "HeadlessHost.kill with no grace signals SIGKILL to the CLI's group at once (no EOF first); the fake claude that reports SIGTERM does not speak the SDK" },
  "start_session {stream_output: true} subscribes the caller to the session's transcript: updates arrive as it grows": same("the transport subscribes the client to session://{id}/transcript; updates come from the change feed, as for every backend"),
  "resume replaces model, permission mode, tools, dirs and system prompt, for that and later resumes": same("planLaunch in sessions/resume.ts builds the stored options and argv for every backend; the headless engine takes the same options"),
  // tests/integration/turns.test.ts

  "interrupt_session ends a slow turn (no Stop hook fires) and the session stays usable": { covered_by: [[E2E, "interrupt_session stops a slow turn at once; the session goes on"]] },
  "an API error ends the turn with final_state error and the message; the next prompt works": { covered_by: [[E2E, "an API error: final_state error with error_subtype api_error"]] },
  "a crash mid-turn wakes the waiter at once with final_state dead and the exit code": { covered_by: [[E2E, "a crash mid-turn wakes the waiter at once with final_state dead; the session is resumable"]] },
  "queue: true types into a busy session; the queued prompt runs as its own turn": { covered_by: [[E2E, "queue: true hands a prompt to a busy session; it runs as its own turn with its own figures"]] },
  // tests/e2e/hostile.test.ts
  "control characters, paste terminators and input-mode prefixes are refused before anything is typed": same("checkPrompt"),
  "a prefix after leading whitespace stays text and arrives byte-exact; nothing runs": {
    covered_by: [[E2E, "prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)"]],
  },
  "a pasted tab reaches the API as four spaces (the interactive CLI's own conversion, documented)": { does_not_apply: "nothing is pasted: a tab reaches the API as a tab (the e2e byte-exact test sends one)" },
  "no sentinel file was ever created": { does_not_apply: "a check of the terminal suite's own hostile prompts; headless prompts never reach a shell or a terminal" },
  // tests/e2e/prompts.test.ts
  "a. two sessions started in parallel reach ready and each answers with the mock's text": {
    covered_by: [[E2E, "parallel starts and turns: each its own session, reply, usage and cost from the SDK; list and log work, screen is refused"]],
  },
  "b. prompts arrive byte-exact at the API": { covered_by: [[E2E, "prompts arrive byte-exact at the API (quotes, $(), backticks, unicode, tabs, newlines, 20,000 characters)"]] },
  "bypassPermissions is refused without CLAUDE_SESSIONS_ALLOW_BYPASS, before anything starts": same("checkPermissionMode"),
  // tests/integration/bounded-logs.test.ts
  "raw output and events stay under their caps while turns go on ending": same("the events log is compacted by the registry for every backend; the headless raw log is the SDK's messages, written by HeadlessHost, and not rotated"),
  // tests/integration/cost.test.ts
  "a turn carries its usage and cost; list_sessions the totals; max_budget_usd refuses the next prompt with the figures": {
    covered_by: [
      [TURNS, "a turn's usage and cost are the figures the mock reported"],
      [TURNS, "max_budget_usd stops a turn with error_max_budget_usd"],
    ],
  },
  "a prompt queued during a turn is charged only its own turn's tokens; the session total counts both once": {
    covered_by: [[E2E, "queue: true hands a prompt to a busy session; it runs as its own turn with its own figures"]],
  },
  "an appended turn is found by search_conversations without a restart, and the hit resumes in one call": same("the transcript index reads Claude's transcripts whatever wrote them; resume by claude_session_id is the launch path every backend shares"),
  // tests/integration/permission-hook.test.ts (terminal sessions' blocking hook; headless answers through canUseTool)
  "allow: the hook takes the decision (no keys), the tool runs, the screen says so; the request shows Claude's suggestions": {
    covered_by: [[PERMS, "allow: the request surfaces (tool, input, suggestions), the tool runs, the log has PermissionRequest then cs:answered"]],
  },
  "deny with a message: the model gets the message as the tool's result and the turn ends normally": {
    covered_by: [[PERMS, "deny with a message: Claude gets the message as the tool's error, the result lists the denial"]],
  },
  "updated_input: the edited command runs instead of the requested one; a message with allow is refused": {
    covered_by: [[PERMS, "allow with updated_input: the tool runs with the caller's input"]],
  },
  "allow_always applies Claude's suggested rule: the next matching command asks nothing": {
    covered_by: [[PERMS, "allow_always applies the suggested rule: the same kind of call is not asked again"]],
  },
  "another server on the same state directory answers the request through the hook (the decision is a file, not keys)": {
    does_not_apply: "a headless session's request lives in its server's canUseTool callback; another server cannot reach that process (as for pty)",
  },
  "interrupt while the hook waits: the turn ends, the hook is ended with the dialog, the next prompt runs at once": {
    covered_by: [[PERMS, "interrupt while a request waits: the request is withdrawn and the turn ends interrupted"]],
  },
  "no answer within CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: the hook gives up, the dialog takes over, respond_permission answers by keys": {
    covered_by: [[PERMS, "a request nobody answers is denied after the timeout, with a message saying so"]],
  },
  // tests/integration/turns.test.ts
  "with the permission hook off, a prompt shows as waiting_for_permission with the tool; allow by keys runs it, deny does not": {
    covered_by: [
      [E2E, "permissions through respond_permission: allow, deny with a message Claude sees, edited input"],
      [PERMS, "allow: the request surfaces (tool, input, suggestions), the tool runs, the log has PermissionRequest then cs:answered"],
    ],
  },
};
