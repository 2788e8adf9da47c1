"""Helpers for tests that drive the dashboard in Chromium: a page that records console
errors, and waits on the scalar cards' plots."""

from __future__ import annotations

__all__ = ["PageWatch", "card_summary", "ema", "wait_ready", "wait_traces", "watched_page"]


class PageWatch:
    """A page plus every console error and uncaught exception it produced."""

    def __init__(self, page) -> None:
        self.page = page
        self.errors: list[str] = []
        self.watching = True
        page.on("console", lambda m: m.type == "error" and self._add(m.text))
        page.on("pageerror", lambda e: self._add(f"pageerror: {e}"))
        page.on("requestfailed", self._request_failed)

    def _request_failed(self, request) -> None:  # noqa: ANN001 - a playwright Request
        # Cancelled, not failed: a reload or navigation drops what the old page still had
        # in flight (its favicon, a poll), and the app aborts fetches it no longer needs.
        if request.failure == "net::ERR_ABORTED":
            return
        self._add(f"requestfailed: {request.url} ({request.failure})")

    def _add(self, message: str) -> None:
        if self.watching:
            self.errors.append(message)

    def finish(self) -> None:
        """Stop recording and leave the page: call it before stopping a server the test
        started itself, whose shutdown the page's polling would otherwise report."""
        self.watching = False
        self.page.goto("about:blank")


def card_summary(page) -> dict:
    """{tag: {state, traces, roles, runs, points}} read from the plotly divs."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.card')].map((c) => {
            const plot = c.querySelector('.plot');
            const data = plot.data || [];
            return [c.dataset.tag, {
              state: c.dataset.state,
              traces: data.length,
              roles: data.map((t) => t.meta.role),
              runs: data.map((t) => t.meta.run),
              points: data.map((t) => t.x.length),
            }];
          }))"""
    )


def wait_ready(page, tags) -> None:
    """Scroll each card into view (cards draw lazily) and wait until it is drawn."""
    for tag in tags:
        card = page.locator(f'.card[data-tag="{tag}"]')
        card.scroll_into_view_if_needed()
        page.wait_for_function(
            "(tag) => [...document.querySelectorAll('.card')].some("
            "(c) => c.dataset.tag === tag && c.dataset.state === 'ready')",
            arg=tag,
        )


def wait_traces(page, tag: str, count: int) -> None:
    page.wait_for_function(
        "([tag, n]) => { const c = [...document.querySelectorAll('.card')]"
        ".find((c) => c.dataset.tag === tag);"
        " return c && c.querySelector('.plot').data && c.querySelector('.plot').data.length === n; }",
        arg=[tag, count],
    )


def ema(values, weight):
    """TensorBoard's debiased exponential moving average: what the scalars view draws for a
    smoothing ``weight``."""
    out, last, n = [], 0.0, 0
    for v in values:
        last = last * weight + (1 - weight) * v
        n += 1
        out.append(last / (1 - weight**n))
    return out


def watched_page(browser, **options):
    """Yields a fresh 1280x800 page's PageWatch (``options``: more of the browser context's,
    e.g. a time zone); the test fails if the page logged any console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, **options)
    page = context.new_page()
    page.set_default_timeout(15_000)
    watch = PageWatch(page)
    yield watch
    context.close()
    assert watch.errors == [], f"console errors: {watch.errors}"
