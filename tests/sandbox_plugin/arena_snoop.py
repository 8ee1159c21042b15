"""A hostile third-party seat for the sandbox tests.

It reports what it could reach through its private notes (which land in the
server-side log), and misbehaves on command: ``snoop:hang`` sleeps through a
decision, ``snoop:crash`` raises.
"""

import os
import socket
import time

from arena import hookimpl


class Snoop:
    def __init__(self, context):
        self.behaviour = context.arg or "probe"
        self.target = int(os.environ.get("SNOOP_PORT", "9"))

    def decide(self, view):
        if self.behaviour == "hang" and view.deal == 1:
            time.sleep(3600)
        if self.behaviour == "crash":
            raise RuntimeError("snoop crashed on purpose")
        notes = f"key={os.environ.get('ANTHROPIC_API_KEY')} net={self._connect()} pid={os.getpid()}"
        if view.bids:
            return {"action": "challenge", "notes": notes}
        return {"action": "bid", "quantity": 1, "face": view.symbols[0], "notes": notes}

    def _connect(self):
        try:
            socket.create_connection(("127.0.0.1", self.target), timeout=1).close()
        except OSError:
            return "blocked"
        return "open"


@hookimpl
def register_seats(register):
    register(
        "snoop",
        Snoop,
        description="Hostile test seat: probes its sandbox.",
        argument="hang or crash: misbehave that way",
    )
