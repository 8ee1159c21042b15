"""A seat's view as a Messages API request, laid out so its long part is a stable prefix.

The words are the model-seat core's (:mod:`arena_plugins.model_seat.prompt`), the
same for every model; this module lays them out as Messages API content blocks
with their cache breakpoints.

The layout, in the order the API reads it (tools, system, messages):

1. the ``act`` tool (same all episode);
2. system: the rules in brief and who the seat is, then the policy; the first
   ``cache_control`` breakpoint sits on the policy block;
3. one user message whose content blocks are the *table record*: an intro, then
   for every finished deal its header (opener, this seat's hand), bids and
   outcome, then the current deal's header and bids so far. The current deal is
   rendered exactly as it will appear once finished, so every prompt of the
   episode extends the previous one. The record goes as the pieces it grew by,
   one block per request of this seat that changed it
   (:meth:`~arena_plugins.model_seat.prompt.SeatRecord.blocks`), and the second
   breakpoint sits on its last block. The previous request's breakpoint is then a
   block boundary of this one, one block back, well within the 20 blocks before
   a breakpoint where the API looks for a cached prefix, so its whole prefix is
   read and none of it written again. (A block per line found the same prefixes
   but sent about 1,300 blocks a request by deal 160, and the SDK copies every
   block of a body before it sends it.);
4. a last block with what changes from turn to turn: the hand and standing bid
   again, this deal's talk (quoted data), the private notes, the legal action
   space and, on rule 11's second ask, why the first reply was rejected.
"""

from __future__ import annotations

from typing import Any

from arena.modes import Mode
from arena.rules import TableRules
from arena.view import SeatView
from arena_plugins.claude.models import ADAPTIVE
from arena_plugins.claude.reply_tool import TOOL_CHOICE, TOOL_CHOSEN, reply_tool
from arena_plugins.claude.settings import ModelSettings
from arena_plugins.model_seat.prompt import SeatRecord, policy_text, rules_in_brief, turn
from arena_policies import Policy

CACHE = {"type": "ephemeral"}


def build_request(
    view: SeatView,
    rules: TableRules,
    policy: Policy,
    settings: ModelSettings,
    kept: SeatRecord | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``messages.create``: the whole request for one decision.

    ``thinking`` is always sent, since leaving it out thinks on the newer models. Thinking
    cannot go with a forced tool, so a thinking request leaves the choice to the model
    (the prompt asks for the tool) and asks for the reasoning's text, which some models
    omit by default; the tool is forced only with thinking ``disabled``. No sampling
    parameter is ever sent (current models refuse them). ``kept`` is the seat's own record
    of finished deals, so a request renders only the deal in play; without one the whole
    record is rendered afresh (the same text).
    """
    thinks = settings.thinking == ADAPTIVE
    thinking = (
        {"type": "adaptive", "display": "summarized"} if thinks else {"type": settings.off_type}
    )
    forced = thinking["type"] == "disabled"
    request: dict[str, Any] = {
        "model": settings.model,
        "max_tokens": settings.request_max_tokens,
        "tools": [reply_tool(rules, view.talk_enabled, strict=settings.strict)],
        "tool_choice": TOOL_CHOICE if forced else TOOL_CHOSEN,
        "system": system_blocks(view, rules.mode, policy),
        "messages": [
            {"role": "user", "content": message_blocks(view, rules.mode, kept or SeatRecord())}
        ],
        "thinking": thinking,
    }
    if settings.effort is not None:
        request["output_config"] = {"effort": settings.effort}
    return request


def system_blocks(view: SeatView, mode: Mode, policy: Policy) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": rules_in_brief(view, mode)},
        {"type": "text", "text": policy_text(policy), "cache_control": CACHE},
    ]


def message_blocks(view: SeatView, mode: Mode, kept: SeatRecord) -> list[dict[str, Any]]:
    blocks = [{"type": "text", "text": piece} for piece in kept.blocks(view, mode)]
    blocks[-1]["cache_control"] = CACHE
    blocks.append({"type": "text", "text": turn(view, mode)})
    return blocks
