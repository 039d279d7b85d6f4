/** The schedule tools (issue 37): schedule_task, list_schedules, change_schedule (pause, resume, delete). */
import {
  changeScheduleInput,
  changeScheduleOutput,
  listSchedulesInput,
  listSchedulesOutput,
  scheduleTaskInput,
  scheduleTaskOutput,
} from "../../api/index.js";
import { changeSchedule, createSchedule, listSchedules } from "../../automations/schedules/create.js";
import { ScheduleStore } from "../../automations/schedules/store.js";
import type { SessionService } from "../../sessions/service.js";
import { defineTool } from "../tool.js";

const storeOf = (svc: SessionService) => new ScheduleStore(svc.deps.cfg.stateDir, svc.deps.log);

export const scheduleTask = defineTool({
  name: "schedule_task",
  title: "Schedule a task",
  description:
    "Runs run_task as schedule:<name> on a cron, at a time, or every interval, while a server runs. Needs a running server (serve --http as a service).",
  toolset: "automations",
  route: "local",
  input: scheduleTaskInput,
  output: scheduleTaskOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (svc, args) => ({ schedule: await createSchedule(storeOf(svc), args) }),
});

export const listSchedulesTool = defineTool({
  name: "list_schedules",
  title: "List schedules",
  description: "The schedules with their next time and last runs (outcome, cost, duration).",
  toolset: "automations",
  route: "local",
  input: listSchedulesInput,
  output: listSchedulesOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  handler: async (svc, args) => ({ schedules: await listSchedules(storeOf(svc), args.name) }),
});

export const changeScheduleTool = defineTool({
  name: "change_schedule",
  title: "Pause, resume or delete a schedule",
  description: "pause: no runs until resume (missed times are not caught up); delete: removed, a run under way goes on.",
  toolset: "automations",
  route: "local",
  input: changeScheduleInput,
  output: changeScheduleOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (svc, args) => {
    const s = await changeSchedule(storeOf(svc), args.name, args.action);
    return { name: args.name, action: args.action, ...(s ? { schedule: s } : {}) };
  },
});

export const SCHEDULE_TOOLS = [scheduleTask, listSchedulesTool, changeScheduleTool] as const;
