"""The digest: every due inbox record, grouped per thread into one summary signal.

Exactly-once delivery under concurrency and crashes: each thread's group is claimed and
delivered in one transaction. The claim is `SELECT ... FOR UPDATE SKIP LOCKED` on the
pending rows, so a second digest job running at the same time skips them; the rows become
`digested` in the same transaction that writes the summary signal, so a worker that dies
midway leaves them pending (its transaction rolls back) for the next job. A group whose
delivery fails adds one attempt to each record with the error, and after
STUDIO_DIGEST_MAX_ATTEMPTS the records are marked failed.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents_core.models import NotificationRecord, NotificationStatus, SignalType, Thread
from agents_core.models.signals import PRIORITY_RANK
from agents_core.services.runs import thread_active_run
from agents_core.signals.notifications import DELIVERY_ERRORS, notification_publish
from agents_core.signals.policy import policy_decide
from agents_core.signals.services import (
    _new_signal,
    signal_dispatch,
    thread_lock,
)
from common.exceptions import ApplicationError

logger = logging.getLogger(__name__)


class DigestDeliveryError(Exception):
    """One thread's digest could not be delivered (the records keep their attempt count)."""


@dataclass
class DigestReport:
    token: str
    delivered: dict[str, list[int]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def records(self) -> int:
        return sum(len(ids) for ids in self.delivered.values())


def _due(now):  # noqa: ANN001, ANN202
    """Pending digest records due by `now` (None: all of them)."""
    records = NotificationRecord.objects.filter(status=NotificationStatus.PENDING, action="digest")
    return records if now is None else records.filter(due_at__lte=now)


def notifications_digest(*, token: str | None = None) -> DigestReport:
    """Deliver every due record, one summary signal per thread."""
    report = DigestReport(token=token or uuid.uuid4().hex)
    now = timezone.now()
    thread_ids = list(_due(now).values_list("thread_id", flat=True).distinct())
    for thread_id in thread_ids:
        try:
            ids = digest_thread(thread_id=thread_id, token=report.token, now=now)
        except DigestDeliveryError as exc:
            report.failed[str(thread_id)] = str(exc)
            continue
        if ids:
            report.delivered[str(thread_id)] = ids
    return report


def digest_thread(*, thread_id, token: str, now) -> list[int]:  # noqa: ANN001
    """Claim and deliver one thread's due records; returns their ids (empty: none left)."""
    claimed: list[int] = []
    try:
        with transaction.atomic():
            thread_lock(thread_id, "inbox")
            records = list(
                _due(now)
                .filter(thread_id=thread_id)
                .select_for_update(skip_locked=True)
                .order_by("id")
            )
            if not records:
                return []
            claimed = [record.id for record in records]
            _deliver_group(Thread.objects.select_related("agent").get(id=thread_id), records, token)
            return claimed
    except DELIVERY_ERRORS as exc:
        _record_failure(claimed, exc)
        raise DigestDeliveryError(f"thread {thread_id}: {exc}") from exc


def _deliver_group(thread: Thread, records: list[NotificationRecord], token: str) -> None:
    priority = max((r.priority for r in records), key=PRIORITY_RANK.__getitem__)
    total = sum(r.count for r in records)
    lines = [
        f"- [{r.priority}] {r.source}{'/' + r.kind if r.kind else ''}: {r.summary}"
        + (f" (x{r.count})" if r.count > 1 else "")
        for r in records
    ]
    active = thread_active_run(thread=thread) is not None
    summary = {
        "source": "digest",
        "kind": "digest",
        "priority": priority,
        "summary": f"{total} notifications",
        "payload": {},
        "count": total,
        "attributes": {},
    }

    def decide(when_active: bool) -> str:
        return policy_decide(agent=thread.agent, notification=summary, active=when_active)

    # A digest reaches the model now (into the run, or waking the thread), or, for a
    # thread whose policy keeps it (the default for low), only the thread and its
    # subscribers: it is persisted without waking the model. The idle choice is kept
    # even for an active thread, for a digest the run ends without reading.
    if_idle = "wake" if decide(False) in ("now", "summary") else "persist"
    if_active = "persist" if active and decide(True) == "persist" else "deliver"
    signal = _new_signal(
        thread=thread,
        type=SignalType.NOTIFICATION,
        tag_name="notifications",
        contents="\n".join(lines),
        attributes={"count": total, "priority": priority, "digest": "true"},
        metadata={"digest": token, "notificationIds": [r.id for r in records]},
        user=None,
    )
    result = signal_dispatch(signal=signal, if_active=if_active, if_idle=if_idle)
    now = timezone.now()
    updated = NotificationRecord.objects.filter(
        id__in=[r.id for r in records], status=NotificationStatus.PENDING
    ).update(
        status=NotificationStatus.DIGESTED,
        claimed_at=now,
        claim_token=token,
        attempts=F("attempts") + 1,
        delivered_at=now,
        error="",
        updated_at=now,
    )
    if updated != len(records):
        # Cannot happen while the rows are locked; if it does, undo the whole group.
        raise DigestDeliveryError(f"claimed {len(records)} records, updated {updated}")
    for record in NotificationRecord.objects.filter(id__in=[r.id for r in records]):
        notification_publish(record, decision=f"digest-{result.decision}")


def _record_failure(ids: list[int], exc: Exception) -> None:
    if not ids:
        return
    limit = settings.STUDIO_DIGEST_MAX_ATTEMPTS
    message = f"{type(exc).__name__}: {exc}"[:2000]
    with transaction.atomic():
        NotificationRecord.objects.filter(id__in=ids, status=NotificationStatus.PENDING).update(
            attempts=F("attempts") + 1, error=message, updated_at=timezone.now()
        )
        failed = NotificationRecord.objects.filter(
            id__in=ids, status=NotificationStatus.PENDING, attempts__gte=limit
        )
        for record in failed.select_for_update():
            record.status = NotificationStatus.FAILED
            record.save(update_fields=["status", "updated_at"])
            notification_publish(record, decision="failed")
    logger.warning("Digest of records %s failed: %s", ids, message)


def notifications_digest_thread_now(*, thread: Thread) -> list[int]:
    """A tester's "digest now": the thread's digest records, due or not."""
    try:
        return digest_thread(thread_id=thread.id, token=uuid.uuid4().hex, now=None)
    except DigestDeliveryError as exc:
        raise ApplicationError(str(exc), code="digest_failed") from exc
