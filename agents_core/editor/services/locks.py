"""Edit locks: one editing session (a page load, a tab) holds an agent's lock at a time.

A session is named by its lock id. `lock_take` starts one; the page renews it by id and
releases it by id when it is left. A second session of the same user (another tab) is
refused like anyone else's and may take the lock over (`take_over=True`); the first then
learns at its next renewal or save that the lock moved.

`lock_guard` is the check every write passes (agents_core.editor.services.revisions calls
it under the agent's row lock, in the write's transaction, before the version check): a
write is refused (423) while a live lock is held by any session but the one it names. With
no live lock the write goes on, and the version check alone guards it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents_core.editor.humanize import human_time
from agents_core.editor.selectors import lock_current, lock_info
from agents_core.editor.services.permissions import Forbidden, can_break_lock, require_edit
from agents_core.models import Agent, EditLock, LockEnd
from common.exceptions import ApplicationError, Conflict

# The request header a write names its lock session with (REST clients and the pages).
LOCK_HEADER = "X-Edit-Lock"


class Locked(ApplicationError):
    status_code: int = 423


def lock_seconds() -> int:
    return settings.STUDIO_EDITLOCK_SECONDS


def _live(lock: EditLock | None, now: datetime) -> bool:
    return lock is not None and lock.expires_at > now


def locked_error(lock: EditLock, *, user: Any, writing: bool = False) -> Locked:
    """The 423: who holds the lock, since when and until when, in words and as ISO times.

    `yours` says the holder is the same user in another session (tab, window or REST
    client): they may take the lock over, where anyone else must wait or break it.
    """
    yours = lock.holder_id == getattr(user, "pk", None)
    since, expires = human_time(lock.acquired_at), human_time(lock.expires_at)
    if yours:
        who = (
            f"You are editing this agent in another tab or window (its lock was taken "
            f"{since} and expires {expires} unless that page renews it)."
        )
        then = " Take the lock over here to edit in this one."
    else:
        who = (
            f"{lock.holder.get_username()} is editing this agent (lock taken {since}, "
            f"it expires {expires} unless renewed)."
        )
        then = " Wait for them to finish."
    return Locked(
        who + (" Nothing was saved." if writing else "") + then,
        code="locked",
        extra={
            "lock": lock_info(lock),
            "holder": lock.holder.get_username(),
            "since": lock.acquired_at.isoformat(),
            "expires": lock.expires_at.isoformat(),
            "since_text": since,
            "expires_text": expires,
            "yours": yours,
        },
    )


def _row_lock(agent: Agent) -> None:
    """Serialise lock changes and writes of one agent on its row."""
    Agent.objects.select_for_update().filter(pk=agent.pk).values_list("pk").first()


def lock_blocking(*, agent: Agent, user: Any, lock_id: int | None) -> EditLock | None:
    """The live lock that keeps session `lock_id` of `user` from writing, or None."""
    lock = lock_current(agent=agent)
    if lock is None or not _live(lock, timezone.now()):
        return None
    if lock_id is not None and lock.pk == lock_id and lock.holder_id == user.pk:
        return None
    return lock


def lock_guard(*, agent: Agent, user: Any, lock_id: int | None) -> None:
    """Refuse (423) a write while a live lock is held by any session but `lock_id`.

    Takes the agent's row lock, so a lock cannot be taken between this check and the
    write's commit; call it inside the write's transaction.
    """
    _row_lock(agent)
    lock = lock_blocking(agent=agent, user=user, lock_id=lock_id)
    if lock is not None:
        raise locked_error(lock, user=user, writing=True)


def _end(lock: EditLock, *, by: Any, reason: str, now: datetime) -> None:
    lock.ended_at, lock.ended_by, lock.end_reason = now, by, reason
    lock.save(update_fields=["ended_at", "ended_by", "end_reason"])


def _new_lock(agent: Agent, user: Any, now: datetime) -> EditLock:
    return EditLock.objects.create(
        agent=agent,
        holder=user,
        acquired_at=now,
        expires_at=now + timedelta(seconds=lock_seconds()),
    )


@transaction.atomic
def lock_take(*, agent: Agent, user: Any, take_over: bool = False) -> EditLock:
    """Start a lock session, taking over an expired lock (recorded).

    A live lock refuses (423), also when its holder is this user in another session,
    unless `take_over`: a user may move their own lock to this session (the other one
    ends as "replaced"); another user's live lock only breaks with `lock_break`.
    """
    require_edit(user=user, agent=agent)
    _row_lock(agent)
    now = timezone.now()
    lock = lock_current(agent=agent)
    if lock is not None:
        mine = lock.holder_id == user.pk
        if _live(lock, now) and not (mine and take_over):
            raise locked_error(lock, user=user)
        _end(lock, by=user, reason=LockEnd.REPLACED if mine else LockEnd.TAKEN_OVER, now=now)
    return _new_lock(agent, user, now)


def _extend(lock: EditLock, now: datetime) -> EditLock:
    lock.expires_at = now + timedelta(seconds=lock_seconds())
    lock.renewed_at = now
    lock.renew_count += 1
    lock.save(update_fields=["expires_at", "renewed_at", "renew_count"])
    return lock


@transaction.atomic
def lock_renew(*, agent: Agent, user: Any, lock_id: int | None = None) -> EditLock:
    """The page's heartbeat for session `lock_id` (None: whichever session the user holds).

    Refused with 423 once another session holds a live lock (someone broke or took it
    over, or the user took it over in another tab), with 409 once the lock is gone.
    """
    require_edit(user=user, agent=agent)
    _row_lock(agent)
    now = timezone.now()
    lock = lock_current(agent=agent)
    if lock is not None and lock.holder_id == user.pk and lock_id in (None, lock.pk):
        return _extend(lock, now)
    if lock is not None and _live(lock, now):
        raise locked_error(lock, user=user)
    raise Conflict("You no longer hold the edit lock; take it again.", code="lock_lost")


@transaction.atomic
def lock_release(*, agent: Agent, user: Any, lock_id: int | None = None) -> None:
    """End the user's lock; with `lock_id`, only that session (a page leaving)."""
    _row_lock(agent)
    lock = lock_current(agent=agent)
    if lock is None or lock.holder_id != user.pk:
        return
    if lock_id is not None and lock.pk != lock_id:
        return
    _end(lock, by=user, reason=LockEnd.RELEASED, now=timezone.now())


@transaction.atomic
def lock_break(*, agent: Agent, user: Any) -> EditLock:
    """Break someone's live lock and take it; needs agents_core.break_editlock."""
    require_edit(user=user, agent=agent)
    if not can_break_lock(user=user):
        raise Forbidden(
            "Breaking another editor's lock needs the 'break edit lock' permission.",
            code="permission_denied",
        )
    _row_lock(agent)
    now = timezone.now()
    lock = lock_current(agent=agent)
    if lock is not None:
        if lock.holder_id == user.pk:
            reason = LockEnd.REPLACED
        else:
            reason = LockEnd.BROKEN if _live(lock, now) else LockEnd.TAKEN_OVER
        _end(lock, by=user, reason=reason, now=now)
    return _new_lock(agent, user, now)
