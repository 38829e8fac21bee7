"""Dates in the site's timezone: what an editor types (a wall-clock time there) and what pages show.

Stored and sent instants are UTC; the dashboard shows them in the site's timezone with
the UTC instant beside, and reads a typed ``YYYY-MM-DDTHH:MM`` as a wall-clock time in
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
    if tz == "UTC":
        return utc.strftime("%Y-%m-%d %H:%M UTC")
    same_day = local.date() == utc.date()
    beside = utc.strftime("%H:%M UTC" if same_day else "%Y-%m-%d %H:%M UTC")
    return f"{local.strftime('%Y-%m-%d %H:%M')} {tz} ({beside})"


def to_input(value: datetime, tz: str) -> str:
    """``value`` as a datetime-local field's value in the site's timezone."""
    return value.astimezone(zone(tz)).strftime(LOCAL_INPUT)


def wall_clock(text: str, tz: str, *, field: str = "publish_at") -> datetime:
    """A wall-clock time typed in the site's timezone → the UTC instant; refuses one that does not exist there."""
    raw = text.strip()
    try:
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
    """The ``min`` and ``max`` of the datetime-local field (a hint; the server checks again)."""
    now = now or datetime.now(UTC)
    return to_input(now + timedelta(minutes=1), tz), to_input(now + MAX_SCHEDULE_AHEAD, tz)


__all__ = ["LOCAL_INPUT", "bounds", "local_and_utc", "parse_local", "to_input", "wall_clock", "zone"]
