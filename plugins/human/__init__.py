"""``human``: a person plays a seat, with every probability computed live.

At the terminal (``arena play --seat human``) the seat prints its turn screen and
reads forgiving input; in the browser (``arena serve``) the table server seats the
same screen model behind a page. :mod:`.screen` is what a person is shown,
:mod:`.feed` the table's public news as it happens, :mod:`.terminal` the text front end,
:mod:`.browser` what the table server takes for the page. The seat declares these
(:class:`~arena.registry.Person`), so the arena's CLI and server never import them.
"""

from __future__ import annotations

from arena import hookimpl
from arena.registry import Person
from arena_plugins.human.browser import browser_move, browser_screen
from arena_plugins.human.feed import public_news
from arena_plugins.human.terminal import human

PERSON = Person(feed=public_news, screen=browser_screen, move=browser_move)
"""How a person is shown the table and moves: the live feed at the terminal and in the page,
the page's turn screen and its typed moves."""


@hookimpl
def register_seats(register):
    register(
        "human",
        human,
        description="You, at the terminal (arena play) or in the browser (arena serve).",
        person=PERSON,
    )
