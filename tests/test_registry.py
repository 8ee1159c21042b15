"""The registry (arena/registry.py): what it records, and the fallback it guarantees.

Rule 11: a seat that fails to give one legal action is asked once more, then the
bayes baseline plays the turn. Which bayes is not up to the plugins loaded: it is
the first-party seat of the essential ``scripted`` entry point, as pytest's
essential plugins cannot be disabled.
"""

from __future__ import annotations

import pytest

from arena import hookimpl
from arena.plugins import load
from arena.registry import PluginInfo, Registry, UnknownName
from arena.runner import EpisodeRequest, run_episode
from arena.seats import SeatSpec
from arena_plugins import dice
from arena_plugins.scripted import bayes


class MuteAndImpostor:
    """``mute`` never answers legally; ``bayes`` here is a local impostor that only challenges."""

    def __init__(self):
        self.impostors_built = 0

    @hookimpl
    def register_seats(self, register):
        register("mute", lambda context: Mute())
        register("bayes", self.impostor)

    def impostor(self, context):
        self.impostors_built += 1
        return Mute()


class Mute:
    def decide(self, view):
        return "no"


def test_rule_11s_fallback_is_first_party_bayes_whatever_the_host_loaded():
    host = load({"ARENA_DISABLE_PLUGIN_AUTOLOAD": "1"})  # nothing loaded: not even scripted
    plugin = MuteAndImpostor()
    host.add(dice, "dice")
    host.add(plugin, "local")
    assert host.registry.fallback() is bayes  # the first-party function, not the local name
    request = EpisodeRequest(seats=2, deals=3, seat_specs=(SeatSpec("mute"),) * 2)
    results, records = run_episode(host, request, environ={})
    decisions = [r for r in records if r["type"] in ("bid", "challenge")]
    # Every decision is the fallback's (mute never answers), and the impostor, which would
    # only ever fail, was never built. bayes opens every deal with a bid (its opening is
    # its own count plus floor(unseen * p), at least 1), which a mute seat cannot make.
    assert decisions and all(r["fallback"] for r in decisions)
    assert plugin.impostors_built == 0
    assert sum(r["type"] == "bid" for r in decisions) >= 3
    assert results.deals_played == 3


def test_a_recorded_plugin_that_provides_nothing_makes_its_name_say_why():
    registry = Registry()
    registry.record(PluginInfo("loaded", "dist-a", "1.0"))
    registry.record(PluginInfo("cracked", "dist-b", "2.0", broken="ImportError: no module x"))
    assert [info.name for info in registry.plugins] == ["loaded", "cracked"]
    why = "plugin 'cracked' (dist-b 2.0) is broken: ImportError: no module x"
    assert registry.broken == [why]
    with pytest.raises(UnknownName, match=r"seat 'cracked' is unavailable: plugin 'cracked'"):
        registry.seat("cracked")
    with pytest.raises(UnknownName, match="broken, providing nothing: plugin 'cracked'"):
        registry.seat("anything")  # any unknown name may be one the broken plugin had
