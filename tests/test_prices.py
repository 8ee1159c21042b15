"""Prices: genai-prices for every Claude model, the league file as an override, sources named.

Expected rates are Anthropic's published list prices per million tokens (Opus 4.7:
input 5, output 25, cache read 0.50, 5-minute cache write 6.25 = 1.25 x input,
1-hour cache write 10 = 2 x input), not read back from the code under test.
"""

from __future__ import annotations

import sqlite3

import genai_prices
import pytest
from genai_prices import Usage, calc_price

from arena.league.config import Entrant, LeagueError, LeagueSpec, league_from_mapping
from arena.league.cost import Price, override, price_of, seat_tokens, table_price
from arena.league.report import league_report
from arena.league.run import check_league
from arena.league.store import LeagueStore
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

VERSION = genai_prices.__version__


def tokens(input=0, output=0, cache_read=0, cache_write=0, one_hour=0) -> dict[str, int]:
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "cacheWrite1h": one_hour,
    }


def test_opus_4_7_is_priced_from_genai_prices_at_its_list_prices():
    price = table_price("claude-opus-4-7")
    assert (price.input, price.output, price.cache_read) == (5.0, 25.0, 0.5)
    assert (price.cache_write, price.cache_write_1h) == (6.25, 10.0)
    assert price.named_source == f"genai-prices {VERSION}"


def test_five_minute_and_one_hour_cache_writes_are_priced_apart():
    # 3000 cache-write tokens, 1000 of them 1-hour writes; nothing else.
    # 2000 x 6.25 + 1000 x 10 = 12500 + 10000 = 22500 per million -> $0.0225.
    # (All 3000 at the 5-minute rate would be 18750 -> $0.01875.)
    price = table_price("claude-opus-4-7")
    assert price.usd(tokens(cache_write=3000, one_hour=1000)) == pytest.approx(0.0225)
    assert price.usd(tokens(cache_write=3000)) == pytest.approx(0.01875)


def test_an_older_usage_without_one_hour_writes_prices_them_all_as_five_minute_ones():
    # A log written before cacheWrite1hTokens: 2000 writes at 3.75 (Sonnet 4.6) = $0.0075.
    old = {"usage": {"inputTokens": 0, "outputTokens": 0, "cacheWriteTokens": 2000}}
    assert seat_tokens(old)["cacheWrite1h"] == 0
    assert table_price("claude-sonnet-4-6").usd(seat_tokens(old)) == pytest.approx(0.0075)


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-haiku-4-5", "claude-sonnet-4-6"])
def test_the_cost_equals_genai_prices_own_calculation_for_the_same_tokens(model):
    # The API's input_tokens exclude cache reads and writes; genai-prices' input_tokens
    # include them (it subtracts the cached parts itself), so its total input is the sum.
    counts = tokens(input=1234, output=567, cache_read=8900, cache_write=4321, one_hour=321)
    theirs = calc_price(
        Usage(
            input_tokens=1234 + 8900 + 4321,
            output_tokens=567,
            cache_read_tokens=8900,
            cache_write_tokens=4321,
            cache_write_1h_tokens=321,
        ),
        model,
        provider_id="anthropic",
    )
    assert table_price(model).usd(counts) == pytest.approx(float(theirs.total_price), rel=1e-12)


def test_a_model_no_table_knows_has_no_price():
    assert table_price("claude-imaginary-9") is None
    assert table_price("gpt-4o") is None  # another provider's model is not a Claude price
    assert price_of("claude-imaginary-9", {}) is None


def test_a_league_file_override_replaces_only_the_rates_it_names_and_says_so():
    spec = league_from_mapping(
        {
            "league": {"allow_repeat": True},
            "entrants": {"a": "bayes"},
            "prices": {"claude-opus-4-7": {"output": 20.0}, "my-model": {"input": 2.0}},
        }
    )
    opus = spec.prices["claude-opus-4-7"]
    assert (opus.input, opus.output, opus.cache_write_1h) == (5.0, 20.0, 10.0)
    assert opus.named_source == f"league file over genai-prices {VERSION}"
    # A model only the league file prices: no 1-hour rate given, so Anthropic's 2x input.
    # 1000 one-hour writes at 2 x 2.0 = 4000 per million -> $0.004.
    mine = spec.prices["my-model"]
    assert mine.usd(tokens(cache_write=1000, one_hour=1000)) == pytest.approx(0.004)
    assert mine.named_source == "league file (1h cache writes at 2x input)"
    assert price_of("my-model", spec.prices) is mine
    assert price_of("claude-haiku-4-5", spec.prices).source == f"genai-prices {VERSION}"


@pytest.mark.parametrize(
    "rates, message",
    [
        ({"output": "cheap"}, r"\[prices.'m'\]: output must be a finite number >= 0, got 'cheap'"),
        ({"input": -1.0}, r"input must be a finite number >= 0, got -1.0"),
        ({"cache_write_5m": 1.0}, r"unknown key 'cache_write_5m'"),
    ],
)
def test_a_bad_override_is_one_line_naming_it(rates, message):
    with pytest.raises(LeagueError, match=message):
        league_from_mapping({"entrants": {"a": "bayes"}, "prices": {"m": rates}})


def test_a_claude_model_no_table_prices_is_refused_naming_the_override(host):
    league = LeagueSpec(
        entrants=(Entrant("c", SeatSpec.parse("claude:honest?model=claude-imaginary-9")),),
        allow_repeat=True,
        table=EpisodeRequest(deals=1),
    )
    with pytest.raises(LeagueError) as refused:
        check_league(league, host, allow_stand_in=True, environ={})
    assert str(refused.value) == (
        "entrant 'c': no price for model 'claude-imaginary-9';"
        ' add [prices."claude-imaginary-9"] to the league file'
    )
    priced = LeagueSpec(
        entrants=league.entrants,
        allow_repeat=True,
        table=league.table,
        prices={"claude-imaginary-9": override("claude-imaginary-9", {"input": 1.0})},
    )
    check_league(priced, host, allow_stand_in=True, environ={})  # the override prices it


def test_a_league_file_stored_before_price_sources_reads_and_resumes(tmp_path):
    # The seats table of a file written before the price_source column existed.
    path = tmp_path / "old.sqlite"
    store = LeagueStore(path)
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE seats DROP COLUMN price_source")
        db.execute("INSERT INTO league VALUES ('{}')")
        db.execute("INSERT INTO episodes VALUES (0, 0, 0, 1, 'complete', 1, 0, '{}')")
        db.execute(
            "INSERT INTO seats VALUES (0, 0, 'c', 'claude:honest', 0, 0.5, 0, NULL,"
            " 'claude-opus-4-7', 10, 20, 0, 0, 0.00055, NULL, NULL, NULL)"
        )
    db = sqlite3.connect(path)
    try:
        assert "price_source" not in {row[1] for row in db.execute("PRAGMA table_info(seats)")}
    finally:
        db.close()
    cost = league_report(path)["cost"]
    assert cost["byPrice"] == [
        {
            "model": "claude-opus-4-7",
            "source": None,
            "tokens": {"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "total": 30},
            "usd": 0.00055,
        }
    ]
    LeagueStore(path).close()  # opening it to write adds the column
    with sqlite3.connect(path) as db:
        assert "price_source" in {row[1] for row in db.execute("PRAGMA table_info(seats)")}


def test_a_price_with_no_one_hour_rate_uses_anthropic_multiplier():
    # Price(input=3) with no 1-hour rate: 1-hour writes at 2 x 3 = 6 per million.
    assert Price(input=3.0).one_hour_write == 6.0
    assert Price(input=3.0, cache_write_1h=7.0).one_hour_write == 7.0
