"""What one visitor holds in a served site's memory, in Chromium: the Submit page lets an upload
go once it is refused or stored (the server's uploaded files, as its own metrics count them,
drop to nothing while the refusal stays on the page), and a visitor's pages beyond
``ETC_PAGES_PER_VISITOR`` say so and stop until one of the others closes.
"""

from __future__ import annotations

import re
import time
import urllib.request

import pytest

from etclib.corpus import load_corpus
from etclib.predictions import dumps_jsonl
from etclib.task import items as split_items

PAGES = 2


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(the site's URL, its environment)."""
    from tests.data.make_tiny_corpus import write_tiny_corpus
    from tests.serve import CHROMIUM, running_site, site_env

    if not CHROMIUM.exists():
        pytest.skip(f"Debian's Chromium is not installed at {CHROMIUM}")
    base = tmp_path_factory.mktemp("memory-site")
    env = site_env(
        base,
        write_tiny_corpus(base / "tiny"),
        ETC_PAGES_PER_VISITOR=str(PAGES),
        ETC_LB_WORKERS="0",
    )
    with running_site(env, log=base / "server.log") as url:
        yield url, env


@pytest.fixture
def browser(site):
    from tests.serve import chromium

    with chromium() as context:
        yield context


def uploads_held(url: str) -> int:
    """Bytes of uploaded files the server holds (its /_stcore/metrics)."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=10) as resp:
        text = resp.read().decode()
    held = re.findall(r'cache_type="UploadedFileManager"[^}]*\} (\d+)', text)
    return sum(int(n) for n in held)


def observed(condition, timeout: float = 60.0) -> None:
    """Wait until ``condition()`` holds (the metrics are recomputed every few seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition was never observed"
        time.sleep(0.5)


def test_an_upload_is_let_go_once_refused_or_stored(site, browser, tmp_path):
    from tests.serve import rerun_after, wait_idle, wait_rendered

    url, env = site
    refused = tmp_path / "refused.jsonl"
    refused.write_bytes(b"{}\n" * 50_000)
    page = browser.new_page()
    page.goto(f"{url}/submit")
    wait_rendered(page, timeout=120)
    page.locator('input[type="file"]').set_input_files(str(refused))
    page.get_by_text("refused.jsonl was refused", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, 60)
    observed(lambda: uploads_held(url) == 0)
    # the refusal stays on the page through a rerun that no longer has the file
    assert rerun_after(
        page, lambda: page.get_by_role("button", name="Template (CSV)", exact=True).click()
    )
    assert page.get_by_text("refused.jsonl was refused", exact=False).count() == 1

    valid = tmp_path / "valid.jsonl"
    tiny = split_items(load_corpus(env["ETC_DATA_DIR"]), "test")
    valid.write_text(dumps_jsonl((it.key, it.reference) for it in tiny), encoding="utf-8")
    page.locator('input[type="file"]').set_input_files(str(valid))
    page.get_by_text("valid.jsonl: valid, ", exact=False).first.wait_for(timeout=60_000)
    wait_idle(page, 60)
    assert page.get_by_text("was refused", exact=False).count() == 0  # a new file: no refusal
    observed(lambda: uploads_held(url) == valid.stat().st_size)  # held until it is stored
    page.get_by_label("Display name *").fill("Kept until stored")
    page.get_by_role("button", name="Submit for scoring").click()
    page.get_by_text("Received as submission", exact=False).first.wait_for(timeout=60_000)
    observed(lambda: uploads_held(url) == 0)
    page.close()


def test_a_visitor_has_at_most_the_bound_of_open_pages(site, browser):
    from tests.serve import wait_rendered

    url, _ = site
    pages = []
    for _ in range(PAGES):
        page = browser.new_page()
        page.goto(url)
        wait_rendered(page, timeout=120)
        assert page.get_by_text("pages of this site open", exact=False).count() == 0
        pages.append(page)
    extra = browser.new_page()
    extra.goto(url)
    extra.get_by_text(f"You have {PAGES} pages of this site open", exact=False).wait_for(
        timeout=60_000
    )
    pages.pop().close()  # one of the others closes: this one may run after a reload
    extra.reload()
    wait_rendered(extra, timeout=120)
    assert extra.get_by_text("pages of this site open", exact=False).count() == 0
    for page in [*pages, extra]:
        page.close()
