"""The `cron` tool: lets the agent schedule reminders and recurring tasks (reference §7 and §10).

Jobs made here are bound to the chat they were asked in (`deliver=True`, `channel`, `to=chat_id`), so
the result comes back to that chat. Scheduling from inside a running cron job is refused, which stops
a job from multiplying itself.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from nanobot_desktop.engine.background.cron import CronSchedule, CronStoreError
from nanobot_desktop.engine.tools.base import Tool, ToolContext, ToolResult, failed


class CronTool(Tool):
    name = "cron"
    description = "Schedule reminders and recurring tasks. Actions: add, list, remove."
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "remove"], "description": "Action to perform"},
            "message": {"type": "string", "description": "Reminder message (for add)"},
            "every_seconds": {"type": "integer", "description": "Interval in seconds (for recurring tasks)"},
            "cron_expr": {"type": "string", "description": "Cron expression like '0 9 * * *' (for scheduled tasks)"},
            "tz": {"type": "string", "description": "IANA timezone for cron expressions (e.g. 'America/Vancouver')"},
            "at": {"type": "string", "description": "ISO datetime for one-time execution (e.g. '2026-02-12T10:30:00')"},
            "job_id": {"type": "string", "description": "Job ID (for remove)"},
        },
        "required": ["action"],
    }

    def asks_for(self, arguments: dict[str, Any]) -> bool:
        """Adding and removing jobs asks (a job runs later, unwatched); listing them does not."""
        return arguments.get("action") != "list"

    async def execute(self, ctx: ToolContext, **kwargs: Any) -> str | ToolResult:
        if ctx.cron is None:
            return failed("Error: scheduling is not available here (no cron service)")
        action = kwargs.get("action")
        try:
            if action == "add":
                return self._add(ctx, **kwargs)
            if action == "list":
                return self._list(ctx)
            if action == "remove":
                return self._remove(ctx, kwargs.get("job_id"))
        except CronStoreError as exc:
            return failed(f"Error: {exc}")
        return failed(f"Error: unknown action '{action}' (use add, list or remove)")

    def _add(self, ctx: ToolContext, **kwargs: Any) -> str | ToolResult:
        if ctx.in_cron_job:
            return failed("Error: cannot schedule new jobs from within a cron job execution")
        message = kwargs.get("message") or ""
        if not message.strip():
            return failed("Error: message is required for add")
        if not ctx.channel or not ctx.chat_id:
            return failed("Error: no session context (channel/chat_id)")
        every_seconds, cron_expr, tz, at = (kwargs.get(k) for k in ("every_seconds", "cron_expr", "tz", "at"))
        if tz and not cron_expr:
            return failed("Error: tz can only be used with cron_expr")
        delete_after_run = False
        if isinstance(every_seconds, str) and every_seconds.strip().isdigit():
            every_seconds = int(every_seconds)  # models sometimes quote numbers
        if every_seconds:
            if isinstance(every_seconds, bool) or not isinstance(every_seconds, int) or every_seconds <= 0:
                return failed(f"Error: every_seconds must be a positive whole number, got {every_seconds!r}")
            schedule = CronSchedule(kind="every", every_ms=every_seconds * 1000)
        elif cron_expr:
            schedule = CronSchedule(kind="cron", expr=cron_expr, tz=tz or None)
        elif at:
            try:
                when = datetime.fromisoformat(str(at))
            except ValueError:
                return failed(f"Error: invalid ISO datetime '{at}' (expected e.g. 2026-02-12T10:30:00)")
            schedule = CronSchedule(kind="at", at_ms=int(when.timestamp() * 1000))  # naive = local time
            delete_after_run = True
        else:
            return failed("Error: either every_seconds, cron_expr, or at is required")
        try:
            job = ctx.cron.add_job(
                name=message[:30],
                schedule=schedule,
                message=message,
                deliver=True,
                channel=ctx.channel,
                to=ctx.chat_id,
                delete_after_run=delete_after_run,
            )
        except ValueError as exc:
            return failed(f"Error: {exc}")
        return f"Created job '{job.name}' (id: {job.id})"

    def _list(self, ctx: ToolContext) -> str:
        jobs = ctx.cron.list_jobs()
        if not jobs:
            return "No scheduled jobs."
        lines = [f"- {job.name} (id: {job.id}, {job.schedule.kind})" for job in jobs]
        return "Scheduled jobs:\n" + "\n".join(lines)

    def _remove(self, ctx: ToolContext, job_id: Any) -> str | ToolResult:
        if not job_id:
            return failed("Error: job_id is required for remove")
        if ctx.cron.remove_job(str(job_id)):
            return f"Removed job {job_id}"
        return f"Job {job_id} not found"

