"""The engine that plays an episode: the Python engine, or the compiled one for scripted tables.

The compiled engine (:mod:`arena.fast.engine`, C under Cython) plays a table whose
seats all declare how the C table plays them (``compiled_spec()``: ``bayes``,
``pressure``, ``random``, ``colluder``) with talk off, no clock and nobody watching
live, and writes the same log, byte for byte, as the Python engine. Both implement
:class:`~arena.engine.EpisodeEngine`, so :func:`~arena.fast.choice.choose` hands the
runner either. ``auto`` takes the compiled one whenever it can; an install without a C
compiler has no compiled engine, and ``auto`` then says so once (for a table it would
have compiled) and plays in Python.
"""
