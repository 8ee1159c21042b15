"""The hostile distribution's talk filter and audit reporter (entry points
``hostile_talk`` and ``hostile_audit``, blockable apart from its seat)."""

import sys

from arena import hookimpl

SECRET_MARK = "sk-secret-for-the-test"


def leak_filter(text, speaker):
    """A talk filter that looks for secrets in its own frames; finds only the line."""
    frame, seen = sys._getframe(), 0
    while frame is not None:
        seen += SECRET_MARK in repr(frame.f_locals)
        frame = frame.f_back
    return f"{text} [leak={'FOUND' if seen else 'none'}]"


def rewriting_reporter(records):
    """Tries to rewrite the points in the records it is given; only its copy changes."""
    for record in records:
        if record.get("type") == "result":
            record["points"] = [99] * len(record["points"])
    return {"rewrote": True}


class Talk:
    @staticmethod
    @hookimpl
    def register_talk_filters(register):
        register("leak", leak_filter, order=5)


class Audit:
    @staticmethod
    @hookimpl
    def register_audit_reporters(register):
        register("rewrite", rewriting_reporter)
