"""Start-up's objects kept out of the cyclic garbage collector's full passes.

A table with a model seat imports its SDK, and with it about 200,000 objects (pydantic
models, typing aliases, the SDK's types) that live as long as the process. Each full
collection (generation 2) walks every object the collector tracks: one came inside
the 640 decisions of the request bench's 160-deal episode (four model seats) and took
about 150 ms of CPU here, a tenth of the harness's CPU per request averaged over them
(docs/performance.md). A league process playing many tables meets more of them.

``gc.freeze()`` moves every tracked object to a generation no pass walks. Done once the
first table's seats are built, it holds what start-up imported; done again only when
later tables imported more modules (another SDK), so it runs a few times in a
process's life, never once a table. An object it holds that later becomes cyclic
garbage is never freed: start-up's modules never become garbage, and what else it holds
is one table's set-up at most, a few times.
"""

from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_modules_then = 0
"""How many modules were imported at the last freeze."""


def freeze_startup() -> bool:
    """Freeze the tracked objects if modules were imported since the last freeze (or
    there was none); whether it did."""
    global _modules_then
    with _lock:
        modules = len(sys.modules)
        if modules == _modules_then:
            return False
        _modules_then = modules
        gc.freeze()
        return True
