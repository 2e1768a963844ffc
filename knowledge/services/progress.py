"""Progress events of a base's ingestion, published to its channel-layer group; the
page's websocket (/ws/knowledge/<slug>/) relays them."""

from __future__ import annotations

import asyncio
import json
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.serializers.json import DjangoJSONEncoder

from knowledge.models import Document, KnowledgeBase
from knowledge.selectors import kb_progress
from knowledge.serializers import DocumentOutputSerializer

log = logging.getLogger(__name__)
_sending: set[asyncio.Task] = set()


def kb_group(kb_id: int) -> str:
    return f"knowledge-kb-{kb_id}"


def progress_publish(*, kb: KnowledgeBase, document: Document | None = None) -> None:
    """Send the base's progress (and the document that changed) to its subscribers.
    A layer that is down loses the event, not the ingestion: the page also polls."""
    event = {
        "type": "knowledge.progress",
        "progress": kb_progress(kb=kb),
        "document": DocumentOutputSerializer(document).data if document is not None else None,
    }
    layer = get_channel_layer()
    if layer is None:
        return
    message = _jsonable(event)
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    try:
        if loop is None:
            async_to_sync(layer.group_send)(kb_group(kb.id), message)
        else:
            # Called from a thread that runs an event loop: sent by the loop.
            task = loop.create_task(layer.group_send(kb_group(kb.id), message))
            _sending.add(task)
            task.add_done_callback(_sending.discard)
    except Exception:  # noqa: BLE001 - a missed progress event must not fail an ingestion
        log.warning("knowledge progress event for base %s not sent", kb.id, exc_info=True)


def _jsonable(value: object) -> object:
    return json.loads(json.dumps(value, cls=DjangoJSONEncoder))
