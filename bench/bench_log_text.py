"""What the log's text safety costs: the writer's escapes and the strict reader.

The writer spells U+0085, U+2028, U+2029 and lone surrogates as ``\\uXXXX``; an
ordinary (ASCII) line pays one ``bytes.isascii`` for that. (A line that holds one of
them pays a regex pass too; such lines are rare, and the figure for them moved by
more than itself from run to run on the shared machine, so it is not given.) The reader splits on
``\\n`` only, decodes UTF-8 per line, and refuses NaN and duplicate keys through a
``json.JSONDecoder`` hook. Each figure is a ratio against a baseline run here on the
same lines: the encoder without the escape step, and the reader as it was (the whole
file decoded, ``str.splitlines``, ``json.loads`` per line). CPU time, best of 9 runs taken in turn.

    python bench/bench_log_text.py --deals 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena import events  # noqa: E402
from arena.eventlog import read_numbered  # noqa: E402
from arena.events import EVENT_TYPES, encode_record, from_record  # noqa: E402
from arena.plugins import load  # noqa: E402
from arena.runner import EpisodeRequest, run_episode  # noqa: E402
from arena.seats import SeatSpec  # noqa: E402


def ratio(candidate, baseline, repeats: int = 9, loops: int = 5) -> tuple[float, float]:
    """Candidate over baseline in CPU time, each the best of ``repeats`` runs taken in
    turn (so a busy machine slows both alike), a run being ``loops`` calls; and the
    candidate's seconds a call."""
    times: dict[str, list[float]] = {"candidate": [], "baseline": []}
    for _ in range(repeats):
        for name, run in (("baseline", baseline), ("candidate", candidate)):
            start = time.process_time()
            for _ in range(loops):
                run()
            times[name].append((time.process_time() - start) / loops)
    return min(times["candidate"]) / min(times["baseline"]), min(times["candidate"])


def unescaped(kind, record) -> bytes:
    """The encoder without the escape step: the baseline for writing."""
    fast = events._fast_line(kind, record)
    return fast if fast is not None else (events._ENCODER.encode(record) + "\n").encode()


def old_reader(path: Path) -> list:
    """The reader before: the whole file decoded, split on every line break."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            from_record(record)
            records.append(record)
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=2000)
    args = parser.parse_args()
    host = load({})
    specs = tuple(SeatSpec(name) for name in ("bayes", "pressure", "bayes", "random"))
    with tempfile.TemporaryDirectory() as where:
        log = Path(where) / "ep.jsonl"
        request = EpisodeRequest(seed=3, deals=args.deals, seat_specs=specs)
        _, records = run_episode(host, request, log_path=log)
        records = json.loads(json.dumps(list(records)))  # plain dicts, made alike
        kinds = [EVENT_TYPES[r["type"]] for r in records]
        pairs = list(zip(kinds, records, strict=True))
        write, write_each = ratio(
            lambda: [encode_record(k, r) for k, r in pairs],
            lambda: [unescaped(k, r) for k, r in pairs],
        )
        assert read_numbered(log)[-1][1] == old_reader(log)[-1]
        read, read_each = ratio(lambda: read_numbered(log), lambda: old_reader(log))
    lines = len(records)
    print(f"{lines:,} lines ({args.deals:,} deals), CPU time, best of 9 interleaved runs")
    print(f"write, ordinary lines: {write:.3f}x the encoder without escapes")
    print(f"  ({write_each / lines * 1e6:.2f} us a line)")
    print(f"read, strict reader: {read:.3f}x the old splitlines reader")
    print(f"  ({read_each / lines * 1e6:.2f} us a line)")


if __name__ == "__main__":
    main()
