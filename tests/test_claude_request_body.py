"""A Claude seat's request bytes (issue 39): every record block encoded once per seat, and
the bytes always exactly what encoding the whole request gives.

:func:`~arena_plugins.claude.request_body.message_body` is the reference: the request as
the SDK itself encodes a body (compact separators, UTF-8, no NaN).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from episode_views import episode_views
from hypothesis import given
from hypothesis import strategies as st

from arena.rules import TableRules
from arena_plugins.claude import request_body
from arena_plugins.claude.prompt import build_request
from arena_plugins.claude.request_body import RequestBody, message_body
from arena_plugins.claude.settings import ModelSettings
from arena_plugins.dice import DICE
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.poker import POKER
from arena_plugins.wild import WILD
from arena_policies import resolve

POLICY = resolve("tracker")


def test_a_request_worked_by_hand():
    """Keys in the request's own order, no spaces, a quote and a newline escaped, ``é`` as
    its two UTF-8 bytes (C3 A9), the breakpoint block and the turn as they are."""
    request = {
        "model": "m",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": 'a"b'},
                    {"type": "text", "text": "é\n", "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": "t"},
                ],
            }
        ],
        "thinking": {"type": "disabled"},
    }
    expected = (
        b'{"model":"m","messages":[{"role":"user","content":['
        b'{"type":"text","text":"a\\"b"},'
        b'{"type":"text","text":"\xc3\xa9\\n","cache_control":{"type":"ephemeral"}},'
        b'{"type":"text","text":"t"}]}],"thinking":{"type":"disabled"}}'
    )
    body = RequestBody()
    assert body(request) == expected
    assert body(request) == expected  # the kept block's JSON, the second time
    assert message_body(request) == expected


@pytest.mark.parametrize("mode", [DICE, POKER, WILD], ids=lambda m: m.name)
@pytest.mark.parametrize("talk", [True, False], ids=["talk", "quiet"])
@pytest.mark.parametrize("seed", [0, 2026])
def test_every_request_of_an_episode_is_the_whole_encoding(mode, talk, seed, monkeypatch):
    """Each seat's every request, as a Claude seat builds it: the same bytes as encoding
    the request whole, and each record block encoded once in the episode."""
    rules = TableRules(mode=mode, seats=4, max_bids=8)
    encoded: list[str] = []
    encode = request_body._json
    monkeypatch.setattr(
        request_body,
        "_json",
        lambda value: (
            encoded.append(value["text"]) or encode(value)
            if isinstance(value, dict) and "cache_control" not in value and "text" in value
            else encode(value)
        ),
    )
    for views in episode_views(mode, 4, seed, 40, talk):
        kept, body = SeatRecord(), RequestBody()
        plain: set[str] = set()  # record blocks sent without the breakpoint
        encoded.clear()
        for view in views:
            request = build_request(view, rules, POLICY, ModelSettings(), kept)
            sent = body(request)
            assert sent == message_body(request)
            assert json.loads(sent) == request
            plain.update(block["text"] for block in request["messages"][0]["content"][:-2])
        times = Counter(encoded)
        assert {text: times[text] for text in plain} == dict.fromkeys(plain, 1)
        assert len(views) > 30 and len(plain) > 30


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
BLOCKS = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), min_size=1, max_size=6
)


@given(st.lists(BLOCKS, min_size=1, max_size=5), TEXT)
def test_any_text_in_any_blocks_encodes_as_the_whole(contents, model):
    """Any characters (quotes, backslashes, controls, non-BMP), blocks repeated or not, on
    one seat's successive requests: always the reference's bytes."""
    body = RequestBody()
    for content in contents:
        request = {"model": model, "messages": [{"role": "user", "content": content}]}
        assert body(request) == message_body(request)


def test_a_block_that_is_not_plain_text_is_encoded_as_it_is():
    """A block of another type, or the same keys in another order, is not taken for the
    kept plain block of the same text: each is its own JSON."""
    body = RequestBody()
    first = {"type": "text", "text": "x"}
    reordered = {"text": "x", "type": "text"}
    image = {"type": "image", "text": "x"}
    for content in ([first, {"type": "text", "text": "t"}], [reordered, image, first]):
        request = {"messages": [{"role": "user", "content": content}]}
        assert body(request) == message_body(request)


def test_a_nan_is_refused_as_the_sdk_refuses_it():
    with pytest.raises(ValueError, match="not JSON compliant"):
        RequestBody()({"temperature": float("nan"), "messages": []})
