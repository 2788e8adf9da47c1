"""The dashboard's "Save as HTML" when the server refuses the report: the server's own
message (its ``{"error"}`` body) is said in the status line and no file is downloaded."""

from __future__ import annotations

import pytest

from tests.helpers.server import serving
from tests.report.conftest import write_logdir

pytestmark = pytest.mark.browser


def test_save_as_html_says_the_servers_error(watched, tmp_path):
    write_logdir(tmp_path)
    with serving(tmp_path) as server:
        page = watched.page
        page.route("**/api/export/html?*", lambda route: route.fulfill(
            status=400, content_type="application/json",
            body='{"error": "tags \'zzz\' matches no tag"}'))
        page.goto(f"{server.url}?tab=scalars")
        page.wait_for_selector("#save-html:not([disabled])")
        # the status line is also the server's (its poll rewrites it): record every text
        page.evaluate("""() => { window.statusTexts = [];
            const status = document.getElementById('status');
            new MutationObserver(() => window.statusTexts.push(status.textContent))
              .observe(status, {childList: true, characterData: true, subtree: true}); }""")
        page.click("#save-html")
        page.wait_for_function("() => window.statusTexts.some((t) => t.includes('Save as'))")
        texts = page.evaluate("() => window.statusTexts")
        watched.finish()
    # the refused request itself is the one console error, as the browser logs any 400
    assert [e for e in watched.errors if "status of 400" not in e] == []
    watched.errors.clear()
    assert "Save as HTML failed: tags 'zzz' matches no tag" in texts
