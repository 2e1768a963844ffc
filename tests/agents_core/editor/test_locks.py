"""Edit locks: expiry, renewal, takeover of an expired lock, breaking a live one."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents_core.editor import services
from agents_core.models import EditLock
from studio.exceptions import Conflict

from .conftest import grant


def expire(lock: EditLock) -> None:
    """Move the expiry into the past, as if the holder's page stopped its heartbeat."""
    EditLock.objects.filter(pk=lock.pk).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_a_lock_expires_after_the_configured_time(code_agent, editor, settings):
    settings.STUDIO_EDITLOCK_SECONDS = 30
    lock = services.lock_take(agent=code_agent, user=editor)
    assert lock.expires_at - lock.acquired_at == timedelta(seconds=30)


def test_renewal_pushes_the_expiry_forward(code_agent, editor):
    lock = services.lock_take(agent=code_agent, user=editor)
    expire(lock)
    renewed = services.lock_renew(agent=code_agent, user=editor)
    assert renewed.pk == lock.pk
    assert renewed.expires_at > timezone.now()
    assert renewed.renew_count == 1


def test_taking_ones_own_lock_again_starts_a_new_session(code_agent, editor):
    first = services.lock_take(agent=code_agent, user=editor)
    again = services.lock_take(agent=code_agent, user=editor)
    assert again.pk != first.pk
    first.refresh_from_db()
    assert first.end_reason == "released"


def test_a_leaving_page_releases_only_its_own_session(code_agent, editor):
    """Save-and-continue: the old page's release arrives after the new page took the lock."""
    old_page = services.lock_take(agent=code_agent, user=editor)
    new_page = services.lock_take(agent=code_agent, user=editor)
    services.lock_release(agent=code_agent, user=editor, lock_id=old_page.pk)
    new_page.refresh_from_db()
    assert new_page.ended_at is None
    services.lock_release(agent=code_agent, user=editor, lock_id=new_page.pk)
    new_page.refresh_from_db()
    assert new_page.end_reason == "released"


def test_a_live_lock_cannot_be_taken(code_agent, editor, second_editor):
    services.lock_take(agent=code_agent, user=editor)
    with pytest.raises(services.Locked) as exc:
        services.lock_take(agent=code_agent, user=second_editor)
    assert exc.value.extra["lock"]["holder"] == "owner"


def test_an_expired_lock_is_taken_over_and_the_takeover_recorded(code_agent, editor, second_editor):
    lock = services.lock_take(agent=code_agent, user=editor)
    expire(lock)
    new = services.lock_take(agent=code_agent, user=second_editor)
    assert new.holder == second_editor
    lock.refresh_from_db()
    assert (lock.end_reason, lock.ended_by) == ("taken_over", second_editor)
    with pytest.raises(services.Locked):
        services.lock_renew(agent=code_agent, user=editor)


def test_breaking_a_live_lock_without_the_permission_is_refused(code_agent, editor, second_editor):
    lock = services.lock_take(agent=code_agent, user=editor)
    with pytest.raises(services.Forbidden):
        services.lock_break(agent=code_agent, user=second_editor)
    lock.refresh_from_db()
    assert lock.ended_at is None


def test_breaking_a_live_lock_with_the_permission_is_recorded(code_agent, editor, second_editor):
    lock = services.lock_take(agent=code_agent, user=editor)
    breaker = grant(second_editor, "break_editlock")
    new = services.lock_break(agent=code_agent, user=breaker)
    lock.refresh_from_db()
    assert (lock.end_reason, lock.ended_by_id, new.holder_id) == ("broken", breaker.pk, breaker.pk)
    history = [(row.holder.username, row.end_reason) for row in EditLock.objects.order_by("id")]
    assert history == [("owner", "broken"), ("teammate", "")]


def test_release_ends_only_ones_own_lock(code_agent, editor, second_editor):
    services.lock_take(agent=code_agent, user=editor)
    services.lock_release(agent=code_agent, user=second_editor)
    assert EditLock.objects.get().ended_at is None
    services.lock_release(agent=code_agent, user=editor)
    assert EditLock.objects.get().end_reason == "released"
    with pytest.raises(Conflict):
        services.lock_renew(agent=code_agent, user=editor)


def test_a_lock_is_an_aid_the_version_check_is_the_guarantee(code_agent, editor, second_editor):
    """A save without the lock still goes through the version check, and only it."""
    services.lock_take(agent=code_agent, user=editor)
    services.override_save(
        agent=code_agent, user=second_editor, version=1, data={"instructions": "x"}
    )
    with pytest.raises(Conflict):
        services.override_save(agent=code_agent, user=editor, version=1, data={"instructions": "y"})
