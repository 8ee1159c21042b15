"""``claude:POLICY``: seats played by Claude through the official ``anthropic`` SDK.

``seat`` holds the seat and its factory, ``prompt`` turns a seat's view into a
request, ``reply_tool`` defines the one tool and reads replies and their
thinking, ``models`` says what a model takes and how a seat's settings fit it,
``lookup`` asks the Models API for a model's rules (once per process), ``client``
makes the call under the retry policy, ``settings`` reads the seat spec and the
environment.
``docs/claude-seat.md`` describes the whole.
"""

from arena import hookimpl
from arena.registry import PaidCalls
from arena_plugins.claude.settings import API_KEY_ENV, SETTINGS, model_of


def claude_seat(context):
    """Build a Claude seat; the SDK is imported here, not when plugins load.

    Importing ``anthropic`` costs seconds, and every ``arena`` command loads
    every plugin: only a table with a Claude seat should pay for it.
    """
    from arena_plugins.claude.seat import claude_seat as build

    return build(context)


def claude_preflight(arg, environ):
    """Check a ``claude:ARG`` seat before any table: its settings, and its model as the
    Models API describes it (see :func:`arena_plugins.claude.seat.preflight`)."""
    from arena_plugins.claude.seat import preflight

    preflight(arg, environ)


@hookimpl
def register_seats(register):
    register(
        "claude",
        claude_seat,
        description="Claude plays from a policy prompt (claude:NAME or claude:PATH.md).",
        stochastic=True,
        argument="a shipped policy NAME or a policy PATH.md",
        paid=PaidCalls(
            key_env=API_KEY_ENV,
            model=model_of,
            arg_key="policy",
            settings=SETTINGS,
            preflight=claude_preflight,
        ),
    )
