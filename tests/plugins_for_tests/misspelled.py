"""A plugin whose hook name is misspelled: ``check_pending`` must reject it."""

from arena import hookimpl


@hookimpl
def register_seat(register):  # the hook is register_seats
    register("never-registered", object)
