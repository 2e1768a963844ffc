"""The garbage collector in a process that executes runs.

Django, litellm and their imports leave about 460,000 objects that live as long as the
process. Every full collection walks all of them: 180 ms on an idle 2-core machine, 200-350
ms under load, and the event loop that carries every stream of the process stands still
meanwhile. Under a hundred streaming chats a full collection came every two seconds, and
the inline executor's p99 fell from 448-464 ms to 319-356 without them (bench.streaming; a
`gc.callbacks` log showed each stall). `settle()` moves what is alive once the model
client is loaded into the permanent generation (`gc.freeze`), so a full collection walks
only what the runs allocate since (about 28,000 objects after the first stream: 5 ms), and
collects the young generations less often: a run allocates many short-lived objects per
chunk.
"""

from __future__ import annotations

import gc

from django.conf import settings

_settled = [False]


def settle() -> bool:
    """Collect once, freeze what is alive and set `STUDIO_RUN_GC_THRESHOLDS`; once per
    process (False when it was already done, or `STUDIO_RUN_SETTLE_HEAP` is off). Call it
    after litellm is imported: what is imported later is walked by every full collection."""
    if _settled[0] or not settings.STUDIO_RUN_SETTLE_HEAP:
        return False
    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.STUDIO_RUN_GC_THRESHOLDS)
    _settled[0] = True
    return True
