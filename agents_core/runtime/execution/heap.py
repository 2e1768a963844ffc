"""The garbage collector in a process that executes runs.

Django, litellm and their imports leave hundreds of thousands of objects that live as
long as the process. A full collection walks all of them while the event loop that
carries every stream of the process stands still, and under many streaming chats full
collections come often (docs/benchmarks.md has the numbers). `settle()` moves what is
alive once the model client is loaded into the permanent generation (`gc.freeze`), so a
full collection walks only what the runs allocated since, and collects the young
generations less often: a run allocates many short-lived objects per chunk.
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
