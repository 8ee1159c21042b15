"""A plugin that registers a fresh seat, then a seat name ``scripted`` already owns."""

from arena import hookimpl
from arena_plugins.scripted import bayes


@hookimpl
def register_seats(register):
    register("only-from-duplicate", bayes)
    register("bayes", bayes)
