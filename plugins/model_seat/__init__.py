"""The model-seat core: what every seat played by a model over an HTTP API shares.

A model seat is one core and a thin wire per API (Claude's Messages API,
OpenAI-compatible chat completions, a third party's own): the wire says how a
request is shaped and how a reply is read; the core holds the rest.

- :mod:`~arena_plugins.model_seat.retries`: the retry and backoff policy around
  one call, and the league-wide limiter's use (a 429's ``retry-after`` and the
  ``x-ratelimit-*`` headers pause every seat of the league);
- :mod:`~arena_plugins.model_seat.stand_in`: the seat another policy plays
  throughout when there is no key, and the warning it gives.

A third-party wire plugin imports these exactly as the first-party ones do.
"""
