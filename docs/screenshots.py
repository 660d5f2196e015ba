"""Screenshots of the site for the documentation (``make screenshots``): every page of the
navigation at a laptop's 1440×900 and a phone's 390×844 as it opens
(``docs/img/<page>-<width>.png``), an entry's page (``entry-<width>.png``), and the README's two
pictures: the Chat with a short dialogue
(``chat.png``) and the Leaderboard's charts with the paper's reported rows (``leaderboard.png``).

The site is served on a throw-away board seeded as ``make prepare`` seeds one (the paper's
reported rows and every computed baseline, scored), its databases and caches in a temporary
folder; the corpus is your ``ETC_DATA_DIR``. Needs Debian's Chromium (``make chromium``).

Run:  .venv/bin/python docs/screenshots.py            # writes docs/img/
      .venv/bin/python docs/screenshots.py --out /tmp/img
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve import (  # noqa: E402
    PAGE_PATHS,
    chromium,
    open_page,
    running_site,
    screenshot,
    site_env,
    site_pages,
    wait_idle,
)

SIZES = ((1440, 900), (390, 844))
#: Vega draws a chart after the script has ended, and widgets being mounted show as
#: skeletons: a screenshot waits until every shown chart has its axes and no skeleton is left.
DRAWN = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
    .every((c) => !c.offsetParent || c.querySelector('svg g.role-axis, canvas'))"""
DIALOGUE = (
    "昨日、友達に裏切られて本当に悲しかったです。",
    "それは辛かったですね。何があったんですか？",
)


def drawn(page) -> None:
    wait_idle(page, timeout=120)
    page.wait_for_function(DRAWN, timeout=60_000)


def pages(context, url: str, out: Path) -> None:
    """Each page of the navigation at each size, the window as it opens."""
    page = context.new_page()
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for script, _ in site_pages():
            stem = Path(script).stem
            open_page(page, f"{url}/{PAGE_PATHS[stem]}", timeout=180)
            drawn(page)
            page.screenshot(path=str(out / f"{stem}-{width}.png"), animations="disabled")
            print(f"{stem}-{width}.png")
    page.close()


def entry(context, url: str, out: Path) -> None:
    """The first entry's page, opened with the Leaderboard's picker, at each size."""
    page = open_page(context.new_page(), f"{url}/{PAGE_PATHS['leaderboard']}")
    drawn(page)
    box = page.get_by_role("combobox", name="Entry", exact=True)
    box.click()
    box.press("ArrowDown")  # a click may only focus it; the key opens its list
    page.get_by_role("option").first.click()
    page.get_by_text("Breakdown by role", exact=False).first.wait_for(timeout=120_000)
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        drawn(page)
        page.screenshot(path=str(out / f"entry-{width}.png"), animations="disabled")
        print(f"entry-{width}.png")
    page.close()


def chat(context, url: str, out: Path) -> None:
    page = open_page(context.new_page(), f"{url}/{PAGE_PATHS['chat']}")
    for n, text in enumerate(DIALOGUE):
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(text)
        box.press("Enter")
        caption = page.get_by_text("Predicted emotion transcription", exact=False)
        caption.nth(n).wait_for(timeout=120_000)
    screenshot(page, out / "chat.png")
    print("chat.png")
    page.close()


def leaderboard(context, url: str, out: Path) -> None:
    page = open_page(context.new_page(), f"{url}/{PAGE_PATHS['leaderboard']}")
    page.get_by_role("tab", name="Charts").click()
    page.get_by_text("Show the paper's reported numbers in the charts").click()
    page.get_by_text("GPT-4.1", exact=False).first.wait_for(timeout=60_000)
    drawn(page)
    screenshot(page, out / "leaderboard.png")
    print("leaderboard.png")
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="where to write")
    args = parser.parse_args(argv)
    corpus = os.environ.get("ETC_DATA_DIR") or str(ROOT / "data" / "ETCDataset" / "etc")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="etc-screenshots-") as tmp:
        env = site_env(Path(tmp), corpus)
        print("Seeding and scoring the board (the reported rows and every computed baseline)")
        subprocess.run(
            [sys.executable, "-m", "leaderboard", "seed-baselines", "--create"],
            cwd=ROOT,
            env={**os.environ, **env},
            check=True,
        )
        with running_site(env, log=Path(tmp) / "server.log") as url, chromium() as context:
            pages(context, url, args.out)
            entry(context, url, args.out)
            chat(context, url, args.out)
            leaderboard(context, url, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
