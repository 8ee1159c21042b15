"""``human``: a person plays a seat, with every probability computed live.

At the terminal (``arena play --seat human``) the seat prints its turn screen and
reads forgiving input; in the browser (``arena serve``) the table server seats the
same screen model behind a page. :mod:`.screen` is what a person is shown,
:mod:`.feed` the table's public news as it happens, :mod:`.terminal` the text front end.
"""

from __future__ import annotations

from arena import hookimpl
from arena_plugins.human.terminal import human, live_printer

HUMAN = "human"
"""The seat a person takes: the table server seats its browser seat under this name, and a
league, which plays unattended, refuses it."""


@hookimpl
def register_seats(register):
    register(
        HUMAN,
        human,
        description="You, at the terminal (arena play) or in the browser (arena serve).",
        person=live_printer,
    )
