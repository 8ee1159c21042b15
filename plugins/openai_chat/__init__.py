"""``openai:POLICY``: seats played by any model behind an OpenAI-compatible chat-completions
endpoint (OpenAI, OpenRouter, Gemini's, DeepSeek, Groq, a local vLLM, llama.cpp or
Ollama), through the official ``openai`` SDK.

``settings`` reads the seat spec and decides whose key goes where, ``client``
makes the SDK client and names its errors, ``wire`` shapes the request and reads
the reply, ``seat`` holds the seat and its factory. The prompt, the ``act``
schema and its reader, the retries, the limiter and the stand-in are the
model-seat core's (:mod:`arena_plugins.model_seat`). ``docs/models.md``
describes the whole.
"""

from arena import hookimpl
from arena.registry import PaidCalls
from arena_plugins.openai_chat.settings import (
    API_KEY_ENV,
    SETTINGS,
    missing_key,
    model_of,
    provider_of,
    unpriced_why,
)


def openai_seat(context):
    """Build an ``openai`` seat; the SDK is imported here, not when plugins load, so that
    only a table with such a seat pays for importing it."""
    from arena_plugins.openai_chat.seat import openai_seat as build

    return build(context)


def openai_preflight(arg, environ):
    """Check an ``openai:ARG`` seat before any table (its settings and endpoint)."""
    from arena_plugins.openai_chat.seat import preflight

    preflight(arg, environ)


@hookimpl
def register_seats(register):
    register(
        "openai",
        openai_seat,
        description="Any model on an OpenAI-compatible endpoint plays from a policy prompt "
        "(openai:NAME?model=M).",
        stochastic=True,
        argument="a shipped policy NAME or a policy PATH.md, then ?model=M",
        paid=PaidCalls(
            key_env=API_KEY_ENV,
            model=model_of,
            arg_key="policy",
            settings=SETTINGS,
            preflight=openai_preflight,
            missing_key=missing_key,
            provider=provider_of,
            unpriced=unpriced_why,
        ),
    )
