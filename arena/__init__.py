"""liars-arena: policies play Liar's Dice and Liar's Poker, scored by rules.md.

``arena.hookimpl`` is the one import a plugin author needs.
"""

from arena.hookspecs import hookimpl

__all__ = ["hookimpl", "__version__"]
__version__ = "0.1.0"
