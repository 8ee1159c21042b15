"""A seat plugin whose factory refuses to build: the runner must report a setup error."""

from arena import hookimpl


def refuse(context):
    raise RuntimeError("needs a policy file")


@hookimpl
def register_seats(register):
    register("fussy", refuse, argument="a policy file")
