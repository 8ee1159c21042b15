"""Leagues and comparisons of a Claude entrant and an ``openai:`` entrant, each over its own
loopback API, priced per provider from genai-prices; a server you run yourself is unpriced.
"""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer
from claude_tables import offline  # noqa: F401  (autouse: no Anthropic key, closed URL)
from genai_prices import Usage, calc_price
from league_runs import play
from messages_server import MessagesServer
from messages_server import table_player as claude_player
from openai_tables import offline as openai_offline  # noqa: F401  (autouse: no OpenAI key)

from arena.cli import main
from arena.league.compare import compare
from arena.league.config import Budget, Entrant, LeagueError, LeagueSpec
from arena.league.report import league_report
from arena.league.run import check_league
from arena.league.store import open_read_only
from arena.runner import EpisodeRequest
from arena.seats import SeatSpec

pytestmark = pytest.mark.slow

VERSION = f"genai-prices {__import__('importlib.metadata').metadata.version('genai-prices')}"


@pytest.fixture
def apis(monkeypatch):
    """Claude's Messages API and OpenAI's chat completions, each on its own loopback port."""
    with (
        MessagesServer(claude_player(patience=lambda deal: 2)) as claude,
        ChatServer("openai") as chat,
    ):
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        monkeypatch.setenv("ARENA_CLAUDE_BACKOFF", "0.01")
        yield claude, chat


def gpt(chat: ChatServer, provider: str | None = "openai") -> SeatSpec:
    tail = f"&provider={provider}" if provider else ""
    return SeatSpec.parse(f"openai:honest?model=gpt-5-mini&base_url={chat.url}/v1{tail}")


def league_of(chat, provider="openai", **options) -> LeagueSpec:
    return LeagueSpec(
        entrants=(
            Entrant("claude", SeatSpec.parse("claude:honest?model=claude-haiku-4-5")),
            Entrant("gpt", gpt(chat, provider)),
            Entrant("bayes", SeatSpec.parse("bayes")),
            Entrant("pressure", SeatSpec.parse("pressure")),
        ),
        tables=2,
        seed=5,
        table=EpisodeRequest(deals=3),
        **options,
    )


def stored_cost(path) -> dict[str, tuple[float, str, dict]]:
    """Each entrant's stored dollars, price source and summed usage (from the results)."""
    db = open_read_only(path)
    try:
        rows = list(db.execute("SELECT idx, slot, entrant, usd, price_source FROM seats"))
        results = {idx: json.loads(r) for idx, r in db.execute("SELECT idx, results FROM episodes")}
    finally:
        db.close()
    found: dict[str, tuple[float, set, dict]] = {}
    for idx, slot, entrant, usd, source in rows:
        usage = results[idx]["seats"][slot].get("usage") or {}
        total, sources, tokens = found.get(entrant, (0.0, set(), {}))
        for key, value in usage.items():
            tokens[key] = tokens.get(key, 0) + value
        found[entrant] = (total + usd, sources | {source}, tokens)
    return {name: (usd, "|".join(map(str, sorted(s))), t) for name, (usd, s, t) in found.items()}


def genai_price(tokens: dict, model: str, provider: str) -> float:
    """genai-prices' own calc_price of a seat's tokens; its input includes the cached part,
    which the log keeps apart."""
    usage = Usage(
        input_tokens=tokens["inputTokens"] + tokens["cacheReadTokens"] + tokens["cacheWriteTokens"],
        output_tokens=tokens["outputTokens"],
        cache_read_tokens=tokens["cacheReadTokens"],
        cache_write_tokens=tokens["cacheWriteTokens"],
        cache_write_1h_tokens=tokens.get("cacheWrite1hTokens", 0),
    )
    return float(calc_price(usage, model, provider_id=provider).total_price)


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_league_of_claude_and_an_openai_entrant_is_priced_per_provider(
    tmp_path, host, apis, executor
):
    _, chat = apis
    path = tmp_path / "mixed.sqlite"
    state = play(path, league_of(chat), host, executor=executor)
    assert state.done == 2 and state.fallbacks == 0  # 2 tables, every move the seats own
    cost = stored_cost(path)
    claude_usd, claude_source, claude_tokens = cost["claude"]
    gpt_usd, gpt_source, gpt_tokens = cost["gpt"]
    assert claude_source == gpt_source == VERSION
    assert gpt_tokens["cacheReadTokens"] > 0  # OpenAI's automatic caching, priced as reported
    assert claude_usd == pytest.approx(genai_price(claude_tokens, "claude-haiku-4-5", "anthropic"))
    assert gpt_usd == pytest.approx(genai_price(gpt_tokens, "gpt-5-mini", "openai"))
    assert gpt_usd > 0 and claude_usd > 0
    cost = league_report(path)["cost"]
    by_price = {p["model"]: p for p in cost["byPrice"]}
    assert by_price["gpt-5-mini"]["usd"] == pytest.approx(gpt_usd)
    assert cost["unpriced"] is False


def test_a_server_you_run_is_unpriced_never_zero_and_a_budget_refuses_it(tmp_path, host, apis):
    _, chat = apis
    path = tmp_path / "local.sqlite"
    play(path, league_of(chat, provider=None), host)
    _, source, tokens = stored_cost(path)["gpt"]
    assert source == "unpriced: a server you run (no provider)" and tokens["outputTokens"] > 0
    cost = league_report(path)["cost"]
    by_price = {p["model"]: p for p in cost["byPrice"]}
    assert by_price["gpt-5-mini"]["usd"] is None
    # The entrant's and the league's dollars say they leave its calls out; Claude's do not.
    assert cost["byEntrant"]["gpt"]["unpriced"] is cost["unpriced"] is True
    assert cost["byEntrant"]["claude"]["unpriced"] is False
    assert cost["usd"] == pytest.approx(cost["byEntrant"]["claude"]["usd"])
    budgeted = league_of(chat, provider=None, budget=Budget(usd=1.0))
    with pytest.raises(LeagueError) as refused:
        check_league(budgeted, host, allow_stand_in=True, environ={})
    assert str(refused.value) == (
        "entrant 'gpt': model 'gpt-5-mini' is unpriced (a server you run: no provider=) and the"
        ' league has a budget; add [prices."gpt-5-mini"] to the league file'
    )


def test_a_local_entrant_needs_no_key_and_a_remote_one_names_the_key_it_lacks(host, apis):
    _, chat = apis
    claude_key = {"ANTHROPIC_API_KEY": "test-key"}
    check_league(league_of(chat), host, allow_stand_in=False, environ=claude_key)  # gpt: local
    remote = LeagueSpec(
        entrants=(
            Entrant("far", SeatSpec.parse("openai:honest?model=gpt-5-mini")),
            Entrant("bayes", SeatSpec.parse("bayes")),
        ),
        allow_repeat=True,
        table=EpisodeRequest(deals=1),
    )
    with pytest.raises(LeagueError, match=r"^no OPENAI_API_KEY: openai entrants \(far\) would"):
        check_league(remote, host, allow_stand_in=False, environ={})


def test_compare_between_a_claude_seat_and_an_openai_seat_is_priced_per_provider(host, apis):
    _, chat = apis
    table = EpisodeRequest(deals=2)
    claude = SeatSpec.parse("claude:honest?model=claude-haiku-4-5")
    result = compare(host, claude, gpt(chat), table, tables=2, seed=1)
    assert result.tables == 2 and result.usd > 0 and result.unpriced == ()
    unpriced = compare(host, claude, gpt(chat, provider=None), table, tables=2, seed=1)
    assert unpriced.unpriced == ("gpt-5-mini",)
    # The same tables, the same Claude calls: only the openai seat's dollars are left out.
    assert 0 < unpriced.usd < result.usd


def test_the_report_page_shows_a_server_you_run_as_unpriced(tmp_path, host, apis, page):
    _, chat = apis
    path = tmp_path / "local.sqlite"
    play(path, league_of(chat, provider=None), host)
    html = tmp_path / "local.html"
    assert main(["report", str(path), "-o", str(html)]) == 0
    tab, watch = page
    tab.goto(html.as_uri())
    tab.wait_for_selector("body[data-ready]", state="attached")
    rows = {
        row.split("\t")[0]: row.split("\t")[-1]
        for row in tab.inner_text("#cost-table tbody").splitlines()
    }
    watch.assert_clean()
    claude = league_report(path)["cost"]["byEntrant"]["claude"]["usd"]
    assert rows["gpt"] == "unpriced"
    assert rows["claude"] == f"{claude:.4f}"
    assert rows["all"] == f"{claude:.4f} + unpriced"  # the league's: Claude's dollars only
