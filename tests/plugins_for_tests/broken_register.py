"""A plugin that registers a mode and then fails inside its hook."""

from arena import hookimpl
from arena.modes import Mode

HALF_DONE = Mode(name="half-done", symbols=(0, 1), hand_size=3)


@hookimpl
def register_modes(register):
    register(HALF_DONE)
    raise RuntimeError("boom while registering")
