"""The trust boundary: third-party plugin code runs in sandboxed workers, never in the arena.

The flow, one module per step:

1. :mod:`~arena.sandbox.discovery` reads what is installed from metadata, importing nothing;
2. :mod:`~arena.sandbox.policy` fixes the isolation and the limits, before any
   third-party code runs;
3. :mod:`~arena.sandbox.launch` starts a worker under that isolation (its own
   uid as root, namespaces under bubblewrap) and kills all of it at the end;
4. :mod:`~arena.sandbox.protocol` frames the messages on dedicated fds, capped;
5. :mod:`~arena.sandbox.worker` is the worker: it imports the entry points it is
   sent (one distribution's, never a withheld one), one by one;
6. :mod:`~arena.sandbox.describe` learns what each untrusted distribution's entry
   points register, entry point by entry point, and caches it;
7. :mod:`~arena.sandbox.remote` is the arena's side of a worker: seats, talk
   filters and reporters that run in workers;
   :mod:`~arena.sandbox.views` sends a seat only what is new since its last decision;
8. :mod:`~arena.sandbox.early` starts ``arena play``'s seats' workers while the
   arena still imports, and :mod:`~arena.sandbox.pool` hands each to its seat.

This package imports nothing at import time: :mod:`arena.plugins` uses the first
two steps, and the worker imports :mod:`arena.plugins`.
"""
