"""First-party plugins of liars-arena, installed as ``arena_plugins``.

Each module is registered through the ``arena`` entry-point group exactly as a
third party's plugin would be; the core never imports them, except the bayes
baseline, which rule 11 needs as the fallback for every seat.
"""
