"""The page fixture itself: a file page renders, and a network request is refused and recorded."""

from __future__ import annotations


def test_offline_page_renders_and_external_requests_are_blocked(page, tmp_path):
    tab, watch = page
    html = tmp_path / "p.html"
    html.write_text(
        "<!doctype html><title>t</title><p id=x>6 x 4</p>"
        '<img src="http://example.invalid/pixel.png">'
    )
    tab.goto(html.as_uri())
    assert tab.text_content("#x") == "6 x 4"
    # The image's request was aborted by the fixture, not fetched.
    assert watch.network == ["http://example.invalid/pixel.png"]
    assert watch.page_errors == []
