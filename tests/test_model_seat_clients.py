"""A model seat's SDK client is kept per thread, every one verifying TLS on one context.

A client shared by a process's thousand tables made its connection pool walk every
connection on every request (plugins/model_seat/clients.py); per thread, a table's seats
share one client and its one connection, and no other thread's requests touch it.
"""

from __future__ import annotations

import ssl
import threading

from arena_plugins.model_seat.clients import per_thread, tls_context
from arena_plugins.model_seat.retries import RetryBounds
from arena_plugins.openai_chat.client import make_client
from arena_plugins.openai_chat.settings import Endpoint


def test_a_thread_keeps_its_client_per_arguments_and_another_thread_gets_its_own():
    made = []

    @per_thread
    def client(name):
        made.append(name)
        return object()

    here = client("a")
    assert client("a") is here  # the same thread and arguments: built once
    assert client("b") is not here
    there = []
    thread = threading.Thread(target=lambda: there.append(client("a")))
    thread.start()
    thread.join()
    assert there[0] is not here
    assert made == ["a", "b", "a"]


def test_openai_clients_of_two_threads_differ_and_share_one_verifying_tls_context():
    place = Endpoint("http://127.0.0.1:9/v1", None, "OPENAI_API_KEY", pairs_openai_env=False)
    bounds = RetryBounds()
    here = make_client(place, bounds)
    assert make_client(place, bounds) is here
    there = []
    thread = threading.Thread(target=lambda: there.append(make_client(place, bounds)))
    thread.start()
    thread.join()
    assert there[0] is not here
    context = tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
