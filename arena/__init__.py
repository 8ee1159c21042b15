"""liars-arena: policies play Liar's Dice and Liar's Poker, scored by rules.md.

``arena.hookimpl`` is the one import a plugin author needs.
"""

__all__ = ["hookimpl", "__version__"]
__version__ = "0.1.0"


def __getattr__(name: str):
    """``hookimpl`` from :mod:`arena.hookspecs`, imported when first asked for: importing
    ``arena`` itself stays free, so the CLI handles a Ctrl-C from its first moments."""
    if name == "hookimpl":
        from arena.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(f"module 'arena' has no attribute {name!r}")
