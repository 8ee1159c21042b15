"""A model seat's request bytes (issue 39): what repeats from request to request encoded
once per seat, and the bytes always exactly what encoding the whole request gives.

:func:`~arena_plugins.model_seat.request_json.encoded` is the reference: the request as
both SDKs encode a body (compact separators, UTF-8, no NaN).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from episode_views import episode_views
from hypothesis import given
from hypothesis import strategies as st

from arena.rules import TableRules
from arena_plugins.claude.prompt import build_request as claude_request
from arena_plugins.claude.settings import ModelSettings
from arena_plugins.dice import DICE
from arena_plugins.model_seat import request_json
from arena_plugins.model_seat.prompt import SeatRecord
from arena_plugins.model_seat.request_json import RequestBody, encoded
from arena_plugins.openai_chat.wire import SHAPES
from arena_plugins.openai_chat.wire import build_request as chat_request
from arena_plugins.poker import POKER
from arena_plugins.wild import WILD
from arena_policies import resolve

POLICY = resolve("tracker")
MODES = pytest.mark.parametrize("mode", [DICE, POKER, WILD], ids=lambda m: m.name)
TALK = pytest.mark.parametrize("talk", [True, False], ids=["talk", "quiet"])


def test_a_block_request_worked_by_hand():
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
    assert encoded(request) == expected


def test_a_kept_text_worked_by_hand():
    """Two requests of a seat whose record grew by ``R2é`` and a newline: the kept JSON is
    the first record's, then the growth's, each escaped once; the system text, which does
    not start with the record, is encoded whole."""
    body = RequestBody()
    first = {
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": 'R1\nT"'}]
    }
    assert body(first, kept="R1\n") == (
        b'{"messages":[{"role":"system","content":"S"},{"role":"user","content":"R1\\nT\\""}]}'
    )
    second = {"messages": [{"role": "user", "content": "R1\nR2é\nT"}], "max_tokens": 9}
    assert body(second, kept="R1\nR2é\n") == (
        b'{"messages":[{"role":"user","content":"R1\\nR2\xc3\xa9\\nT"}],"max_tokens":9}'
    )
    again = {"messages": [{"role": "user", "content": "X\nT"}]}  # another record: no reuse
    assert body(again, kept="X\n") == b'{"messages":[{"role":"user","content":"X\\nT"}]}'


@MODES
@TALK
@pytest.mark.parametrize("seed", [0, 2026])
def test_every_claude_request_of_an_episode_is_the_whole_encoding(mode, talk, seed, monkeypatch):
    """Each seat's every request, as a Claude seat builds it: the same bytes as encoding
    the request whole, and each record block encoded once in the episode: the plain
    blocks encoded are the last request's record blocks before its breakpoint, one for
    one (two deals may well have a block of the same text, each encoded once)."""
    rules = TableRules(mode=mode, seats=4, max_bids=8)
    blocks: list[str] = []
    encode = request_json._json

    def counted(value):
        if isinstance(value, dict) and tuple(value) == request_json.PLAIN_TEXT:
            blocks.append(value["text"])
        return encode(value)

    monkeypatch.setattr(request_json, "_json", counted)
    for views in episode_views(mode, 4, seed, 40, talk):
        kept, body = SeatRecord(), RequestBody()
        blocks.clear()
        for view in views:
            request = claude_request(view, rules, POLICY, ModelSettings(), kept)
            sent = body(request)
            assert sent == encoded(request)
            assert json.loads(sent) == request
        plain = [block["text"] for block in request["messages"][0]["content"][:-2]]
        times, want = Counter(blocks), Counter(plain)  # the turns are encoded every time
        assert {text: times[text] for text in want} == want
        assert len(views) > 30 and len(plain) > 30


@MODES
@TALK
@pytest.mark.parametrize("shape", SHAPES)
def test_every_chat_request_of_an_episode_is_the_whole_encoding(mode, talk, shape, monkeypatch):
    """Each seat's every chat-completions request, in each shape: the same bytes as
    encoding it whole. The finished record is escaped once: of the text the encoder is
    given as strings over the episode, the record is the last request's finished part
    once, plus every request's part after it and the object keys (at most 100 characters
    a request); encoding each user text afresh would have cost the sum of them all."""
    rules = TableRules(mode=mode, seats=4, max_bids=8)
    strings = [0]
    encode = request_json._json

    def counted(value):
        if isinstance(value, str):
            strings[0] += len(value)
        return encode(value)

    monkeypatch.setattr(request_json, "_json", counted)
    for views in episode_views(mode, 4, 3, 40, talk):
        kept, body = SeatRecord(), RequestBody()
        strings[0], after_record, users = 0, 0, 0
        for view in views:
            request = chat_request(
                view, rules, POLICY, "m", shape, strict=True, cap=("max_tokens", 64), kept=kept
            )
            sent = body(request, kept=kept.finished)
            assert sent == encoded(request)
            assert json.loads(sent) == request
            user = request["messages"][1]["content"]
            assert user.startswith(kept.finished) and len(kept.finished) > 0
            after_record += len(user) - len(kept.finished)
            users += len(user)
        assert strings[0] <= len(kept.finished) + after_record + 100 * len(views)
        assert strings[0] < users / 4


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
        assert body(request) == encoded(request)


@given(st.lists(st.tuples(TEXT, TEXT, st.booleans()), min_size=1, max_size=8))
def test_any_kept_text_encodes_as_the_whole(steps):
    """A kept text that grows, or starts again, with any characters, and any text after
    it: always the reference's bytes (JSON escapes character by character)."""
    body, kept = RequestBody(), ""
    for grown, after, restart in steps:
        kept = grown if restart else kept + grown
        request = {"messages": [{"role": "user", "content": kept + after}]}
        assert body(request, kept=kept) == encoded(request)


def test_a_block_that_is_not_plain_text_is_encoded_as_it_is():
    """A block of another type, or the same keys in another order, is not taken for the
    kept plain block of the same text: each is its own JSON."""
    body = RequestBody()
    first = {"type": "text", "text": "x"}
    reordered = {"text": "x", "type": "text"}
    image = {"type": "image", "text": "x"}
    for content in ([first, {"type": "text", "text": "t"}], [reordered, image, first]):
        request = {"messages": [{"role": "user", "content": content}]}
        assert body(request) == encoded(request)


def test_values_equal_in_python_but_not_in_json_are_never_taken_for_kept_ones():
    """``1 == True == 1.0`` in Python, and JSON writes them ``1``, ``true``, ``1.0``: a
    block whose text is not a string is not kept, so the same place holding another of
    them is encoded as it is. A key that is not a string is written as the string the
    encoder makes of it (``1`` as ``"1"``)."""
    body = RequestBody()
    for text, written in ((1, b"1"), (True, b"true"), (1.0, b"1.0")):
        content = [{"type": "text", "text": text}, {"type": "text", "text": "t"}]
        request = {"messages": [{"role": "user", "content": content}]}
        assert body(request) == (
            b'{"messages":[{"role":"user","content":[{"type":"text","text":'
            + written
            + b'},{"type":"text","text":"t"}]}]}'
        )
    request = {"messages": [{"role": "user", 1: "x", "content": "R\nT"}]}
    assert body(request, kept="R\n") == (
        b'{"messages":[{"role":"user","1":"x","content":"R\\nT"}]}'
    )


def test_a_nan_is_refused_as_the_sdks_refuse_it():
    with pytest.raises(ValueError, match="not JSON compliant"):
        RequestBody()({"temperature": float("nan"), "messages": []})
