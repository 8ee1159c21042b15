"""What configures an ``openai:`` seat: its ``--seat`` spec, the environment, and whose key
goes where.

``openai:POLICY?model=M[&base_url=URL&key_env=NAME&reasoning_effort=E&provider=ID&max_tokens=N&timeout=S&max_reply_bytes=B]``:
POLICY is a shipped policy name or a prompt file (:mod:`arena_policies`), as for
Claude seats; ``model`` is required (no model is everyone's default). The
defaults are the SDK's own variables, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``,
so two seats at one table can call two providers.

A key goes only to the origin (scheme, host and port) the user paired it with
(:func:`endpoint`, :mod:`arena_plugins.model_seat.origin`):

- ``OPENAI_API_KEY``, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID`` and the headers
  ``OPENAI_CUSTOM_HEADERS`` names go to the origin of ``OPENAI_BASE_URL``, or to
  OpenAI's own https origin when that is unset, as the SDK pairs them;
- a seat whose own ``base_url=`` names another origin (another port or scheme of
  the same host included) sends only the key its ``key_env=`` names, or none:
  trying someone's server never hands it your OpenAI key by accident;
- ``key_env=`` names an API key's variable (:func:`check_key_env`): its whole
  value is sent as a bearer token, so ``PATH`` or a cloud's secret never is;
- a loopback or private ``base_url`` (a server you run yourself) needs no key.

Where a key is needed and none is set, bayes stands in, as for a Claude seat
with no ``ANTHROPIC_API_KEY``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from arena_plugins.model_seat.origin import (
    Origin,
    check_base_url,
    host_of,
    is_local,
    origin_of,
    shown,
)
from arena_plugins.model_seat.prices import checked_provider, provider_of_url
from arena_plugins.model_seat.retries import BOUND_SETTINGS, number
from arena_plugins.model_seat.spec import split_arg

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_BASE_URL = "https://api.openai.com/v1"
"""The SDK's default endpoint, where ``OPENAI_API_KEY`` goes when ``OPENAI_BASE_URL`` is unset."""
RETRY_PREFIX = "ARENA_OPENAI"
"""``ARENA_OPENAI_TIMEOUT``, ``_RETRY_ATTEMPTS``, ``_RETRY_SECONDS``, ``_BACKOFF``."""

SETTINGS = (
    "model",
    "base_url",
    "key_env",
    "reasoning_effort",
    "provider",
    "max_tokens",
    *BOUND_SETTINGS,
)
"""What a seat spec's query may set."""
DEFAULT_MAX_TOKENS = 8192
"""The output cap sent when a seat sets none: room for a reasoning model's thinking and the
call, and an end for a model that never stops (one decision took 121.8 s without it)."""
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
"""The SDK's ``ReasoningEffort`` values (openai 3.x)."""


@attrs.frozen
class SeatArg:
    """A parsed ``openai:`` argument: the policy reference and the seat's settings."""

    policy: str
    model: str
    base_url: str | None = None
    key_env: str | None = None
    reasoning_effort: str | None = None
    provider: str | None = None
    max_tokens: int | None = None
    bounds: Mapping[str, str] = attrs.field(factory=dict)
    """The seat's own call bounds (``timeout``, ``max_reply_bytes``), as written."""


def parse_arg(arg: str | None) -> SeatArg:
    """The seat spec's argument; ``ValueError`` (one line) for anything it cannot play."""
    policy, given = split_arg(arg, SETTINGS, "an openai seat needs a policy: openai:NAME?model=M")
    values = {key: value.strip() for key, value in given.items()}
    empty = sorted(key for key, value in values.items() if not value)
    if empty:
        raise ValueError(f"{', '.join(empty)} must not be empty")
    if "model" not in values:
        raise ValueError("an openai seat needs a model: openai:POLICY?model=M")
    effort = values.get("reasoning_effort")
    if effort is not None and effort.lower() not in REASONING_EFFORTS:
        allowed = ", ".join(REASONING_EFFORTS)
        raise ValueError(f"reasoning_effort must be one of {allowed}, got {effort!r}")
    base_url = values.get("base_url")
    if base_url is not None:
        check_base_url(base_url, "base_url")
    key_env = values.get("key_env")
    if key_env is not None:
        check_key_env(key_env)
    return SeatArg(
        policy=policy,
        model=values["model"],
        base_url=base_url,
        key_env=key_env,
        reasoning_effort=effort.lower() if effort else None,
        provider=values.get("provider"),
        max_tokens=number(values.get("max_tokens"), "max_tokens", int, None, low=1),
        bounds={key: values[key] for key in BOUND_SETTINGS if key in values},
    )


KEY_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*(_KEY|_TOKEN)")
"""What an API key's variable is called: ``OPENROUTER_API_KEY``, ``GEMINI_API_KEY``,
``HF_TOKEN``, ``GITHUB_TOKEN`` (GitHub Models)."""
NOT_API_KEYS = frozenset(
    {
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AZURE_CLIENT_SECRET",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPM_TOKEN",
        "NODE_AUTH_TOKEN",
        "PYPI_TOKEN",
        "PYPI_API_TOKEN",
        "TWINE_PASSWORD",
        "CARGO_REGISTRY_TOKEN",
        "DOCKER_AUTH_CONFIG",
        "VAULT_TOKEN",
        "CI_JOB_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    }
)
"""Secrets shaped like a key's name that no chat-completions server takes as its bearer
token: a cloud's or a registry's, which a shared league file must never send."""


def check_key_env(name: str) -> None:
    """``ValueError`` unless ``name`` is an API key's variable: upper case, ending in ``_KEY``
    or ``_TOKEN``, and not a well-known secret of another service (:data:`NOT_API_KEYS`).
    The variable's whole value is sent as ``Authorization: Bearer``, so a league file
    naming ``PATH``, ``HOME`` or ``AWS_SECRET_ACCESS_KEY`` is refused, not warned about:
    the value would already have left by the time anyone read a warning."""
    if name in NOT_API_KEYS:
        raise ValueError(
            f"key_env={name} is another service's secret, not an API key: it is never sent"
        )
    if not KEY_VARIABLE.fullmatch(name):
        shown_name = name if len(name) <= 60 else name[:59] + "…"
        raise ValueError(
            f"key_env must name an API key's variable (upper case, ending in _KEY or _TOKEN, "
            f"such as OPENROUTER_API_KEY), got {shown_name!r}"
        )


@attrs.frozen
class Endpoint:
    """Where one seat's requests go, and the key they carry."""

    base_url: str
    key: str | None
    """``None``: no ``Authorization`` header at all."""
    key_env: str
    """The variable the key comes (or would come) from, as a warning names it."""
    pairs_openai_env: bool
    """The SDK's own pairing (``OPENAI_API_KEY`` to ``OPENAI_BASE_URL``'s origin or OpenAI's):
    only then may the SDK's other variables (organization, project, custom headers) go
    along."""

    @property
    def origin(self) -> Origin:
        """Where every request of this seat goes, and the only place its key may."""
        return origin_of(self.base_url)

    @property
    def local(self) -> bool:
        return is_local(self.base_url)

    @property
    def needs_key(self) -> bool:
        """A server you run yourself needs none; any other does."""
        return not self.local

    @property
    def missing_key(self) -> str | None:
        """The key a call needs and lacks (``OPENAI_API_KEY``, the seat's ``key_env``, or
        ``key_env= for HOST`` where no key may go), or ``None``."""
        if not self.needs_key or self.key is not None:
            return None
        if self.key_env == "key_env":
            return f"key_env= for {host_of(self.base_url)}"
        return self.key_env

    @property
    def openai_host(self) -> bool:
        """OpenAI's own API, which takes strict tool schemas (as does a seat that names
        ``provider=openai``, whatever its URL)."""
        return host_of(self.base_url) == host_of(OPENAI_BASE_URL)


def endpoint(seat: SeatArg, environ: Mapping[str, str]) -> Endpoint:
    """The seat's base URL and key, by the rules above."""
    env_url = (environ.get(BASE_URL_ENV) or "").strip() or None
    if env_url is not None:
        check_base_url(env_url, BASE_URL_ENV)
    paired_url = env_url or OPENAI_BASE_URL
    base_url = seat.base_url or paired_url
    pairs = seat.base_url is None or origin_of(seat.base_url) == origin_of(paired_url)
    if seat.key_env is not None:
        key_env = seat.key_env
    elif pairs:
        key_env = API_KEY_ENV
    else:
        return Endpoint(base_url, None, "key_env", pairs_openai_env=False)
    key = (environ.get(key_env) or "").strip() or None
    return Endpoint(base_url, key, key_env, pairs_openai_env=pairs and key_env == API_KEY_ENV)


def missing_key(arg: str | None, environ: Mapping[str, str]) -> str | None:
    """The key a seat of ``openai:ARG`` lacks, so that a stand-in would play it, or ``None``."""
    return endpoint(parse_arg(arg), environ).missing_key


def model_of(arg: str | None, environ: Mapping[str, str]) -> str:
    """The model a seat of ``openai:ARG`` calls: what a league prices."""
    return parse_arg(arg).model


def unpriced_why(arg: str | None, environ: Mapping[str, str]) -> str:
    """Why a seat of ``openai:ARG`` that no price covers is unpriced: a loopback or private
    base URL is a server the user runs; any other is named (its host, bounded)."""
    place = endpoint(parse_arg(arg), environ)
    if place.local:
        return "a server you run"
    return f"no price known for {shown(host_of(place.base_url))}"


def provider_of(arg: str | None, environ: Mapping[str, str]) -> str | None:
    """The genai-prices provider a seat of ``openai:ARG`` is priced by: its ``provider=``,
    else its base URL's host's; ``None`` (unpriced) for a server you run, or a host no
    table knows."""
    seat = parse_arg(arg)
    if seat.provider is not None:
        return checked_provider(seat.provider)
    place = endpoint(seat, environ)
    return None if place.local else provider_of_url(place.base_url)
