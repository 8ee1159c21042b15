"""Leagues: rank many entrants over many seeded tables, with stated confidence and cost.

The flow, one module a step:

- :mod:`~arena.league.config`: the league file (or ``--pool`` flags) as a
  :class:`LeagueSpec`: entrants, table settings, how tables are formed,
  budget, concurrency, API limits and prices;
- :mod:`~arena.league.schedule`: the fixtures, a pure function of the settings;
- :mod:`~arena.league.executors`: where tables are played (serial, threads,
  processes, Ray);
- :mod:`~arena.league.run`: checks, then plays what the store lacks, within
  the budget;
- :mod:`~arena.league.store`: the SQLite file, one transaction per episode,
  with its compressed event log;
- :mod:`~arena.league.cost`: tokens and dollars per model;
- :mod:`~arena.league.standings`: bootstrap CIs over tables, head-to-head,
  the Plackett-Luce rating;
- :mod:`~arena.league.report`: show and export.

Nothing is imported here: :mod:`arena.audit` reads the store, and the store
must not pull the runner (which imports the audit) in behind it.
"""
