"""A page cannot make ``arena serve`` send a file or the API key to the Messages API.

The real server (tests/serving.py) plays Claude seats against the recording
loopback Messages API (tests/messages_server.py), its key and URL in the
server's environment as a user would set them. A page asks for seats naming a
secret file, ``/etc/passwd`` and ``/proc/self/environ`` (which holds the key):
each is refused. A table of the one policy file the command line offered is
then played, and every request the API received is read, body and headers: the
offered file's text is there (so the check can see a file), and no other
file's text, nor the key outside its own header, is anywhere.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from messages_server import MessagesServer, table_player
from serving import serve

pytestmark = pytest.mark.slow

KEY = "sk-ant-loopback-key-0b1c2d3e"
OFFERED_MARK = "OFFERED-POLICY-7f3a"
SECRET_MARK = "SECRET-FILE-91ce"


def policy(name: str, mark: str) -> str:
    return f"---\nname: {name}\ndescription: a test policy\n---\nPlay the odds. {mark}\n"


def test_a_page_cannot_make_the_server_send_a_file_or_the_key(tmp_path):
    offered = tmp_path / "offered.md"
    offered.write_text(policy("offered", OFFERED_MARK))
    secret = tmp_path / "secret.md"
    secret.write_text(policy("secret", SECRET_MARK))
    with MessagesServer(table_player()) as api:
        env = os.environ | {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}
        stopping = serve(tmp_path, "--seat", "human", "--offer", f"claude:{offered}", env=env)
        served = next(stopping)
        looked_up = list(api.model_lookups)  # the offered seat's check at launch, if any
        status, setup = served.send("GET", "/api/setup")
        choices = [seat["name"] for seat in json.loads(setup)["seats"]]
        assert choices == ["human", "bayes", f"claude:{offered}"]  # exactly the command line's
        asked = [
            f"claude:{secret}",
            "claude:/etc/passwd",
            "claude:/proc/self/environ",
            "claude:secret.md",  # relative to the server's folder, which holds secret.md
            f"claude:{offered}/../secret.md",
            f" claude:{offered}",  # the offered text, but not exactly
        ]
        for seat in asked:
            status, reply = served.post("/api/tables", {"seats": [seat, "bayes"], "deals": 2})
            assert status == 400 and reply["error"].startswith(
                f"seat 0: {seat[:40]!r} is not offered here"
            ), reply
        time.sleep(0.5)  # time enough for a table to ask the API, had one started
        assert api.requests == [] and api.model_lookups == looked_up
        assert list(served.log_dir.iterdir()) == []
        status, _table = served.post(
            "/api/tables", {"seats": [f"claude:{offered}", "bayes"], "deals": 2}
        )
        assert status == 200
        _path, records = served.logged()
        stopping.close()
    assert records[0]["seats"][0]["policy"] == f"claude:{offered}"
    assert api.requests, "the offered Claude seat asked the API nothing"
    passwd = Path("/etc/passwd").read_text().splitlines()[0]  # e.g. root:x:0:0:root:/root:...
    for path in api.model_lookups:  # the Models API's GETs: a path each, no body
        assert not any(mark in path for mark in (KEY, SECRET_MARK, passwd, OFFERED_MARK)), path
    for request in api.requests:
        body = request.body.decode()
        assert OFFERED_MARK in body  # the file the command line named is what is sent
        for foreign in (SECRET_MARK, passwd, KEY, "ANTHROPIC_BASE_URL"):
            assert foreign not in body
        # The key travels in the one header that authenticates the call (the SDK's own
        # choice of the two the API takes), and in no other.
        keyed = {name: value for name, value in request.headers.items() if KEY in value}
        assert keyed in ({"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"}), keyed
        for value in request.headers.values():
            assert SECRET_MARK not in value and passwd not in value
