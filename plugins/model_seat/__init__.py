"""The model-seat core: what every seat played by a model over an HTTP API shares.

A model seat is one core and a thin wire per API (Claude's Messages API,
OpenAI-compatible chat completions, a third party's own): the wire says how a
request is shaped and how a reply is read; the core holds the rest.

- :mod:`~arena_plugins.model_seat.spec`: the seat argument's spelling,
  ``POLICY?setting=value``;
- :mod:`~arena_plugins.model_seat.prompt`: the prompt's words (the rules in brief,
  the table record, the turn), the same for every model;
- :mod:`~arena_plugins.model_seat.action`: the ``act`` schema, and the reader that
  turns a reply's calls or text into what the engine parses (rule 11 judges it);
- :mod:`~arena_plugins.model_seat.retries`: the retry and backoff policy around
  one call, and the league-wide limiter's use (a 429's ``retry-after`` and the
  ``x-ratelimit-*`` headers pause every seat of the league);
- :mod:`~arena_plugins.model_seat.usage`: a call's tokens in the engine's vocabulary;
- :mod:`~arena_plugins.model_seat.prices`: which genai-prices provider prices a seat;
- :mod:`~arena_plugins.model_seat.stand_in`: the seat another policy plays
  throughout when there is no key, and the warning it gives.

A third-party wire plugin imports these exactly as the first-party ones do.
"""
