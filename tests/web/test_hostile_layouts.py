"""Patterns from the logs or the URL cannot hang the page (issue 29, item 4), in headless
Chromium over real logs and a real server. A custom-scalars layout logged with a
backtracking multiline regex ((a+)+$ against a tag of 40 a's: the browser's engine would
never return) leaves the page usable: the tab bar, the layout's other regex drawn, the other
charts drawn, and the card says which pattern was refused. A layout regex that passes the
check but is slow on a hostile tag (.*.*.*X against 3,000 a's: cubic) is stopped by the
worker's time limit, and named too. The same holds for the tag and run filters and the
charts made from regexes that come in the URL."""

from __future__ import annotations

import json
import random
from urllib.parse import quote

import pytest

from tests.helpers.patterns import random_regex
from tests.helpers.server import serving
from visualdl import LogWriter

pytestmark = pytest.mark.browser

LONG_TAG = "a" * 40 + "/loss"  # what (a+)+$ backtracks on
HUGE_TAG = "a" * 3000  # what .*.*.*X takes cubic time on
TAGS = ("loss", "acc", LONG_TAG, HUGE_TAG)
BACKTRACKING = "(a+)+$"
CUBIC = ".*.*.*X"
LAYOUT = {
    "Hostile": {"backtracks": ["Multiline", [BACKTRACKING, "^loss$"]],
                "cubic": ["Multiline", [CUBIC, "^acc$"]]},
    "Fine": {"accuracy": ["Multiline", ["^acc$"]]},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-layouts")
    for run, scale in (("r1", 1.0), ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 2.0)):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(20):
                for i, tag in enumerate(TAGS):
                    w.add_scalar(tag, scale * (i + step), step, walltime=1e9 + step)
            w.add_custom_scalars(LAYOUT)
    with serving(root) as handle:
        yield handle


def card_state(page, title: str) -> dict | None:
    return page.evaluate(
        """(title) => {
            const c = [...document.querySelectorAll('.card')].find((c) =>
              c.dataset.chart === title && c.dataset.pinned !== '1');
            if (!c) return null;
            const p = c.querySelector('.plot');
            return {state: c.dataset.state, note: c.querySelector('.card-note').textContent,
                    tags: [...new Set((p.data || []).map((t) => t.meta.tag))].sort()};
          }""",
        title,
    )


def wait_card(page, title: str) -> dict:
    page.locator(f'.card[data-chart="{title}"]').first.scroll_into_view_if_needed()
    page.wait_for_function(
        """(title) => [...document.querySelectorAll('.card')].some((c) =>
             c.dataset.chart === title && ['ready', 'empty'].includes(c.dataset.state))""",
        arg=title,
    )
    return card_state(page, title)


def test_a_backtracking_layout_regex_is_refused_in_its_card(watched, server, tmp_path):
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    hostile = wait_card(page, "backtracks")
    assert hostile["state"] == "ready"
    assert f'Refused pattern "{BACKTRACKING}"' in hostile["note"]
    assert "exponential" in hostile["note"]
    assert hostile["tags"] == ["loss"]  # the layout's other regex still draws
    fine = wait_card(page, "accuracy")
    assert fine["state"] == "ready" and fine["tags"] == ["acc"] and "Refused" not in fine["note"]
    single = wait_card(page, LONG_TAG)  # a chart per tag: the long tag's too
    assert single["state"] == "ready"
    slow = wait_card(page, "cubic")  # passed the check; stopped by the worker's time limit
    assert f'Refused pattern "{CUBIC}": matching took over 1 s' in slow["note"]
    assert slow["state"] == "ready" and slow["tags"] == ["acc"]
    assert page.locator("#tabs [role=tab]").all_text_contents() == ["Scalars"]
    page.screenshot(path=str(tmp_path / "hostile-layout.png"), full_page=True)


def test_backtracking_patterns_in_the_url_are_refused_by_name(watched, server, tmp_path):
    page = watched.page
    made = json.dumps(["(.*)*X", "^acc$"])
    query = (f"?tags={quote(BACKTRACKING)}&runFilter={quote('(a|a)*b')}"
             f"&runWhere={quote('lr~(x+x+)+y')}&chart={quote(made)}")
    page.goto(server.url + query)
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    errors = page.locator(".filter-error:not([hidden])")
    page.wait_for_function("() => document.querySelectorAll('.filter-error:not([hidden])').length === 3")
    texts = errors.all_text_contents()
    assert any(f'Refused pattern "{BACKTRACKING}"' in t for t in texts), texts
    assert any('Refused pattern "(a|a)*b"' in t for t in texts), texts
    assert any('Refused pattern "(x+x+)+y"' in t for t in texts), texts
    chart = wait_card(page, "(.*)*X | ^acc$")
    assert 'Refused pattern "(.*)*X"' in chart["note"] and chart["tags"] == ["acc"]
    # a refused filter hides nothing: every tag's chart is there and draws
    for tag in TAGS:
        assert wait_card(page, tag)["state"] == "ready"
    page.screenshot(path=str(tmp_path / "hostile-url.png"), full_page=True)


def test_a_chart_made_from_a_backtracking_regex_is_refused_at_once(watched, server):
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    page.fill("input[name=new-chart]", "(a+)+$, ^loss$")
    page.click("form.new-chart button[type=submit]")
    error = page.locator(".new-chart-error")
    error.wait_for(state="visible")
    assert f'Refused pattern "{BACKTRACKING}"' in error.text_content()
    assert "chart=" not in page.url


def test_ordinary_patterns_work_as_before(watched, server):
    page = watched.page
    made = json.dumps(["^acc$", "loss$"])
    page.goto(server.url + f"?tags={quote('^(acc|loss)$')}&chart={quote(made)}")
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    assert wait_card(page, "^acc$ | loss$")["tags"] == sorted(["acc", "loss", LONG_TAG])
    page.wait_for_function(
        "() => [...document.querySelectorAll('.card:not([data-pinned])')].filter((c) =>"
        " c.closest('.group').dataset.group.startsWith('\\u0000layout') === false &&"
        " c.dataset.kind === 'tag').length === 2")
    assert page.locator(".filter-error:not([hidden])").count() == 0


REFUSED = ["(.*)*X", "(a+)+$", "(a|a)*b", "(x+x+)+y", "(?:(a|b)c)+", "(x{2,}){2}", r"(a)\1",
           r"(?<n>a)\k<n>", "a" * 1001]
COUNTED = [".*.*.*X", ".*a.*b.*c", "a{0,60}a{0,60}a{0,60}b", "a?" * 11 + "b",  # polynomial
           r"\w{4294967295}", "a{17}.*.*"]
ACCEPTED = [r"^(.*)_seed\d+$", "loss|acc", "^acc$", "(train|eval)/loss", "[(+*]+", r"\(a+\)+",
            "(?:ab)+", "((a)b)*", r"\p{L}+", "x{1,3}", ".*a.*b", r"^lr\d+_seed\d+$", "a?" * 10,
            "^(?=a)b", "a" * 1000]


def test_the_check_refuses_only_what_can_blow_up(watched, server):
    """shared/regex.js's check, run in the page over a table of patterns."""
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    verdicts = page.evaluate(
        """async (patterns) => {
             const { refusal } = await import('./static/js/shared/regex.js');
             return patterns.map((p) => [refusal(p), refusal(p, { counts: false })]);
           }""",
        REFUSED + COUNTED + ACCEPTED,
    )
    strict = dict(zip(REFUSED + COUNTED + ACCEPTED, (v[0] for v in verdicts)))
    timed = dict(zip(REFUSED + COUNTED + ACCEPTED, (v[1] for v in verdicts)))
    assert all(strict[p] for p in REFUSED + COUNTED), strict
    assert not any(strict[p] for p in ACCEPTED), strict
    # for a worker with a time limit, only the exponential shapes are refused outright
    assert all(timed[p] for p in REFUSED), timed
    assert not any(timed[p] for p in COUNTED + ACCEPTED), timed


def test_fuzzed_patterns_the_check_lets_through_finish_on_hostile_names(watched, server):
    """Seeded random patterns: every one the strict check (the filters') accepts is matched,
    as the filters match, against hostile names (cut to the pattern's SUBJECT_LIMITS), in the
    app's own match worker; each must finish before a deadline (a worker that does not is
    ended and its pattern reported). The worker keeps the test alive if the check is wrong."""
    rng = random.Random(29)
    patterns = [random_regex(rng, extras=False) for _ in range(300)]
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#tab-scalars[aria-selected=true]")
    result = page.evaluate(
        """async (patterns) => {
             const { safeRegExp, bounded } = await import('./static/js/shared/regex.js');
             const subjects = ['a'.repeat(5000), 'a'.repeat(40) + '!', 'ab'.repeat(3000),
                               'x'.repeat(4096) + '_', 'é'.repeat(4096), '_'.repeat(100)];
             const accepted = patterns.map((p) => [p, safeRegExp(p, 'i').limit]).filter(([, limit]) => limit);
             const url = new URL('./static/js/shared/matchworker.js', document.baseURI);
             const stuck = [];
             let worker = null;
             for (const [id, [pattern, limit]] of accepted.entries()) {
               worker ||= new Worker(url, { type: 'module' });
               const done = new Promise((resolve) => {
                 worker.onmessage = (e) => { if (!e.data.started) resolve(true); };
               });
               worker.postMessage({ id, pattern, flags: 'i', texts: subjects.map((t) => bounded(t, limit)) });
               const deadline = new Promise((resolve) => setTimeout(() => resolve(false), 10000));
               if (!(await Promise.race([done, deadline]))) {
                 stuck.push(pattern);
                 worker.terminate();
                 worker = null;
               }
             }
             worker?.terminate();
             return { accepted: accepted.length, stuck };
           }""",
        patterns,
    )
    assert result["stuck"] == []
    assert result["accepted"] >= 50  # the fuzz reaches the matcher, not only the refusals
