"""A reporter plugin that raises a flag for every pair, so the ``audit`` tail has lines."""

from arena import hookimpl


class FlagEveryPair:
    """Stands in for the flags reporter: flags slots (0, 1) and (2, 3), to exercise the tail."""

    @hookimpl
    def register_audit_reporters(self, register):
        register(
            "flags",
            lambda records: [{"flag": "t", "slots": [0, 1]}, {"flag": "t", "slots": [2, 3]}],
        )
