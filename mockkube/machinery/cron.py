"""Cron schedules as the CronJob controller reads them (robfig/cron's standard parser,
through croniter): parse errors for validation, and the most recent / next scheduled
times for the controller, in the CronJob's time zone. Pure: times are passed in."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

# croniter (with dateutil) and zoneinfo are imported at the first schedule read: 70 ms of a
# server's start-up otherwise, for CronJobs most clusters never have


def _croniter() -> Any:
    from croniter import croniter

    return croniter


_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def split_tz(schedule: str) -> tuple[str, str | None]:
    """``TZ=Europe/Paris 0 * * * *`` -> (``0 * * * *``, ``Europe/Paris``)."""
    s = schedule.strip()
    for prefix in ("CRON_TZ=", "TZ="):
        if s.startswith(prefix):
            tz, _, rest = s[len(prefix) :].partition(" ")
            return rest.strip(), tz
    return s, None


def _expr(schedule: str) -> str:
    s, _ = split_tz(schedule)
    if s.startswith("@every"):
        raise ValueError("@every is not supported")
    return _MACROS.get(s, s)


def valid_timezone(tz: str) -> bool:
    if tz in ("", "Local"):
        return tz == "Local"
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(tz)
        return True
    except (ZoneInfoNotFoundError, ValueError):
        return False


def parse_error(schedule: str) -> str | None:
    """None when the schedule parses; otherwise robfig/cron's kind of message."""
    try:
        s, tz = split_tz(schedule)
        if tz is not None and not valid_timezone(tz):
            return f"provided bad location {tz}: unknown time zone {tz}"
        expr = _expr(schedule)
        if len(expr.split()) != 5:
            return f"expected exactly 5 fields, found {len(expr.split())}: [{expr}]"
        if not _croniter().is_valid(expr):
            return f"unparseable schedule: {expr!r}"
    except ValueError as e:
        return str(e)
    return None


def _zone(schedule: str, tz: str | None):
    _, inline = split_tz(schedule)
    name = tz or inline
    if not name or name == "Local":
        return timezone.utc  # the simulated controller-manager runs in UTC
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def next_after(schedule: str, tz: str | None, t: float) -> float:
    """The first scheduled time strictly after ``t`` (unix seconds)."""
    z = _zone(schedule, tz)
    it = _croniter()(_expr(schedule), datetime.fromtimestamp(t, z))
    return it.get_next(datetime).timestamp()


def most_recent(schedule: str, tz: str | None, earliest: float, now: float) -> tuple[float | None, int]:
    """getMostRecentScheduleTime: the latest scheduled time in (earliest, now] and how many
    were missed (capped at 101, which is all the controller needs to know)."""
    t = next_after(schedule, tz, earliest)
    if t > now:
        return None, 0
    last, n = t, 1
    while True:
        t = next_after(schedule, tz, last)
        if t > now:
            return last, n
        last, n = t, n + 1
        if n > 100:
            # jump near now: count stays "more than 100"
            prev = _croniter()(_expr(schedule), datetime.fromtimestamp(now, _zone(schedule, tz))).get_prev(datetime)
            return prev.timestamp(), 101


NEXT_SCHEDULE_DELTA = 0.1  # nextScheduleDelta: the controller looks again 100 ms after a schedule time


def next_schedule_delay(schedule: str, tz: str | None, created: float, last: float | None, now: float) -> float:
    """nextScheduleTimeDuration: seconds from ``now`` until the controller should look
    again (the schedule time after the most recent one, plus 100 ms)."""
    earliest = last if last is not None else created
    recent, _ = most_recent(schedule, tz, earliest, now)
    return next_after(schedule, tz, recent if recent is not None else earliest) + NEXT_SCHEDULE_DELTA - now


def rfc3339_in(t: float, schedule: str, tz: str | None) -> str:
    """Go's time.RFC3339 of ``t`` in the CronJob's time zone ("Z" for UTC, else an offset)."""
    d = datetime.fromtimestamp(t, _zone(schedule, tz) if tz else timezone.utc).replace(microsecond=0)
    off = d.utcoffset()
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ("Z" if not off else d.strftime("%z")[:3] + ":" + d.strftime("%z")[3:])


def rfc1123z(t: float) -> str:
    """Go's time.RFC1123Z in UTC: ``Mon, 02 Jan 2006 15:04:05 +0000``."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%a, %d %b %Y %H:%M:%S +0000")
