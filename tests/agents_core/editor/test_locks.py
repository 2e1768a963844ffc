"""Edit locks: expiry, renewal, takeover of an expired lock, breaking a live one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents_core.editor.services import locks, permissions, revisions
from agents_core.models import Agent, EditLock, Revision
from common.exceptions import Conflict

from .conftest import grant


def expire(lock: EditLock) -> None:
    """Move the expiry into the past, as if the holder's page stopped its heartbeat."""
    EditLock.objects.filter(pk=lock.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_a_lock_expires_after_the_configured_time(code_agent, editor, settings):
    settings.STUDIO_EDITLOCK_SECONDS = 30
    lock = locks.lock_take(agent=code_agent, user=editor)
    assert lock.expires_at - lock.acquired_at == timedelta(seconds=30)


def test_renewal_pushes_the_expiry_forward(code_agent, editor):
    lock = locks.lock_take(agent=code_agent, user=editor)
    expire(lock)
    renewed = locks.lock_renew(agent=code_agent, user=editor)
    assert renewed.pk == lock.pk
    assert renewed.expires_at > timezone.now()
    assert renewed.renew_count == 1


def test_a_second_session_of_the_holder_is_refused_until_it_takes_the_lock_over(code_agent, editor):
    """Two tabs of one user: the second is told the first holds the lock, and may move it."""
    first = locks.lock_take(agent=code_agent, user=editor)
    with pytest.raises(locks.Locked) as exc:
        locks.lock_take(agent=code_agent, user=editor)
    assert exc.value.extra["yours"] is True
    assert exc.value.extra["lock"]["id"] == first.pk
    assert "another tab or window" in exc.value.message
    again = locks.lock_take(agent=code_agent, user=editor, take_over=True)
    assert again.pk != first.pk
    first.refresh_from_db()
    assert (first.end_reason, first.ended_by) == ("replaced", editor)
    # The first tab learns it at its next heartbeat, with who holds the lock now.
    with pytest.raises(locks.Locked) as renew:
        locks.lock_renew(agent=code_agent, user=editor, lock_id=first.pk)
    assert (renew.value.extra["yours"], renew.value.extra["lock"]["id"]) == (True, again.pk)
    assert locks.lock_renew(agent=code_agent, user=editor, lock_id=again.pk).pk == again.pk


def test_another_user_cannot_take_over_a_live_lock(code_agent, editor, second_editor):
    locks.lock_take(agent=code_agent, user=editor)
    with pytest.raises(locks.Locked) as exc:
        locks.lock_take(agent=code_agent, user=second_editor, take_over=True)
    assert (exc.value.extra["yours"], exc.value.extra["holder"]) == (False, "owner")
    assert EditLock.objects.get(ended_at__isnull=True).holder == editor


def test_a_leaving_page_releases_only_its_own_session(code_agent, editor):
    """Save-and-continue: the old page's release arrives after the new page took the lock."""
    old_page = locks.lock_take(agent=code_agent, user=editor)
    new_page = locks.lock_take(agent=code_agent, user=editor, take_over=True)
    locks.lock_release(agent=code_agent, user=editor, lock_id=old_page.pk)
    new_page.refresh_from_db()
    assert new_page.ended_at is None
    locks.lock_release(agent=code_agent, user=editor, lock_id=new_page.pk)
    new_page.refresh_from_db()
    assert new_page.end_reason == "released"


def test_a_live_lock_cannot_be_taken(code_agent, editor, second_editor):
    locks.lock_take(agent=code_agent, user=editor)
    with pytest.raises(locks.Locked) as exc:
        locks.lock_take(agent=code_agent, user=second_editor)
    assert exc.value.extra["lock"]["holder"] == "owner"


def test_an_expired_lock_is_taken_over_and_the_takeover_recorded(code_agent, editor, second_editor):
    lock = locks.lock_take(agent=code_agent, user=editor)
    expire(lock)
    new = locks.lock_take(agent=code_agent, user=second_editor)
    assert new.holder == second_editor
    lock.refresh_from_db()
    assert (lock.end_reason, lock.ended_by) == ("taken_over", second_editor)
    with pytest.raises(locks.Locked):
        locks.lock_renew(agent=code_agent, user=editor)


def test_breaking_a_live_lock_without_the_permission_is_refused(code_agent, editor, second_editor):
    lock = locks.lock_take(agent=code_agent, user=editor)
    with pytest.raises(permissions.Forbidden):
        locks.lock_break(agent=code_agent, user=second_editor)
    lock.refresh_from_db()
    assert lock.ended_at is None


def test_breaking_a_live_lock_with_the_permission_is_recorded(code_agent, editor, second_editor):
    lock = locks.lock_take(agent=code_agent, user=editor)
    breaker = grant(second_editor, "break_editlock")
    new = locks.lock_break(agent=code_agent, user=breaker)
    lock.refresh_from_db()
    assert (lock.end_reason, lock.ended_by_id, new.holder_id) == ("broken", breaker.pk, breaker.pk)
    history = [(row.holder.username, row.end_reason) for row in EditLock.objects.order_by("id")]
    assert history == [("owner", "broken"), ("teammate", "")]


def test_release_ends_only_ones_own_lock(code_agent, editor, second_editor):
    locks.lock_take(agent=code_agent, user=editor)
    locks.lock_release(agent=code_agent, user=second_editor)
    assert EditLock.objects.get().ended_at is None
    locks.lock_release(agent=code_agent, user=editor)
    assert EditLock.objects.get().end_reason == "released"
    with pytest.raises(Conflict):
        locks.lock_renew(agent=code_agent, user=editor)


def test_a_write_from_another_session_is_refused_while_the_lock_is_live(
    code_agent, editor, second_editor
):
    """Every write passes the lock guard; with no live lock the version check alone guards."""
    lock = locks.lock_take(agent=code_agent, user=editor)
    for user, session in ((second_editor, None), (second_editor, lock.pk), (editor, None)):
        with pytest.raises(locks.Locked) as exc:
            revisions.override_save(
                lock_id=session, agent=code_agent, user=user, version=1, data={"instructions": "x"}
            )
        assert exc.value.extra["holder"] == "owner"
        assert "Nothing was saved" in exc.value.message
    agent = Agent.objects.get(pk=code_agent.pk)
    assert agent.version == 1 and not Revision.objects.filter(agent=agent).exists()

    revisions.override_save(
        lock_id=lock.pk, agent=code_agent, user=editor, version=1, data={"instructions": "mine"}
    )
    expire(lock)
    revisions.override_save(
        lock_id=None, agent=code_agent, user=second_editor, version=2, data={"instructions": "x"}
    )
    with pytest.raises(Conflict):
        revisions.override_save(
            lock_id=lock.pk, agent=code_agent, user=editor, version=2, data={"instructions": "y"}
        )
