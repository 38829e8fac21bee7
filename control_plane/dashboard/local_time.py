"""Dates in the site's timezone: what an editor types (a wall-clock time there) and what pages show.

Stored and sent instants are UTC; the dashboard shows them in the site's timezone with
the UTC instant beside, and reads a typed ``YYYY-MM-DDTHH:MM`` (or ``…:SS``: the scheduling
fields step by the second, so a publish can be a few seconds ahead) as a wall-clock time in
that timezone. A time that does not exist there (the hour skipped when clocks go
forward) is refused; one that happens twice (clocks go back) is the first of the two,
and the UTC instant shown beside it says which.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tenant_runtime.actions.releases import MAX_SCHEDULE_AHEAD
from tenant_runtime.errors import InvalidSchedule

LOCAL_INPUT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends
LOCAL_INPUT_SECONDS = "%Y-%m-%dT%H:%M:%S"  # what it sends with step="1" when the seconds are not 0


def zone(name: str) -> ZoneInfo:
    """The site's timezone; an unknown name (never stored, but be safe) is UTC."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def local_and_utc(value: datetime | None, tz: str) -> str:
    """``2027-01-05 09:00 Europe/Berlin (08:00 UTC)``; the UTC date too when it differs."""
    if value is None:
        return "—"
    local = value.astimezone(zone(tz))
    utc = value.astimezone(UTC)
    clock = "%H:%M:%S" if utc.second else "%H:%M"  # a time picked to the second says its seconds
    if tz == "UTC":
        return utc.strftime(f"%Y-%m-%d {clock} UTC")
    same_day = local.date() == utc.date()
    beside = utc.strftime(f"{clock} UTC" if same_day else f"%Y-%m-%d {clock} UTC")
    return f"{local.strftime(f'%Y-%m-%d {clock}')} {tz} ({beside})"


def to_input(value: datetime, tz: str) -> str:
    """``value`` as a datetime-local field's value in the site's timezone."""
    return value.astimezone(zone(tz)).strftime(LOCAL_INPUT)


def wall_clock(text: str, tz: str, *, field: str = "publish_at") -> datetime:
    """A wall-clock time typed in the site's timezone → the UTC instant; refuses one that does not exist there."""
    raw = text.strip()
    with_seconds = len(raw) >= 19 and raw[16] == ":"
    try:
        if with_seconds:
            naive: datetime | None = datetime.strptime(raw[:19], LOCAL_INPUT_SECONDS)
        else:
            naive = datetime.strptime(raw[:16], LOCAL_INPUT) if len(raw) >= 16 else None
    except ValueError:
        naive = None
    if naive is None:
        raise InvalidSchedule("Enter a date and time (e.g. 2027-01-05 09:00).", details={"field": field})
    site = zone(tz)
    when = naive.replace(tzinfo=site).astimezone(UTC)
    if when.astimezone(site).replace(tzinfo=None) != naive:
        raise InvalidSchedule(
            f"{naive:%Y-%m-%d %H:%M} does not exist in {tz} (the clocks skip it); pick another time.",
            details={"field": field},
        )
    return when


def parse_local(text: str, tz: str, *, now: datetime | None = None) -> datetime:
    """A wall-clock time typed in the site's timezone → the UTC instant; refuses past, > 90 days, nonexistent."""
    now = now or datetime.now(UTC)
    when = wall_clock(text, tz)
    if when <= now:
        raise InvalidSchedule(
            f"{local_and_utc(when, tz)} is in the past; pick a time after now.", details={"field": "publish_at"}
        )
    if when - now > MAX_SCHEDULE_AHEAD:
        latest = local_and_utc(now + MAX_SCHEDULE_AHEAD, tz)
        raise InvalidSchedule(
            f"A publish can be scheduled at most 90 days ahead (until {latest}).",
            details={"field": "publish_at", "max_days": 90},
        )
    return when


def bounds(tz: str, *, now: datetime | None = None) -> tuple[str, str]:
    """The ``min`` and ``max`` of the datetime-local field (a hint; the server checks again): from the next
    second (a field that steps by the second may schedule a few seconds ahead) to 90 days ahead."""
    now = now or datetime.now(UTC)
    earliest = (now + timedelta(seconds=1)).astimezone(zone(tz)).strftime(LOCAL_INPUT_SECONDS)
    return earliest, to_input(now + MAX_SCHEDULE_AHEAD, tz)


__all__ = [
    "LOCAL_INPUT",
    "LOCAL_INPUT_SECONDS",
    "bounds",
    "local_and_utc",
    "parse_local",
    "to_input",
    "wall_clock",
    "zone",
]
