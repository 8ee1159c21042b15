"""``claude:POLICY``: seats played by Claude through the official ``anthropic`` SDK.

``seat`` holds the seat and its factory, ``prompt`` turns a seat's view into a
request, ``reply_tool`` defines the one forced tool and reads replies,
``client`` makes the call under the retry policy, ``settings`` reads the seat
spec and the environment. ``docs/claude-seat.md`` describes the whole.
"""

from arena import hookimpl
from arena_plugins.claude.seat import claude_seat


@hookimpl
def register_seats(register):
    register(
        "claude",
        claude_seat,
        description="Claude plays from a policy prompt (claude:NAME or claude:PATH.md).",
        stochastic=True,
    )
