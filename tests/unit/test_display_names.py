"""Display names (entry name, team, description): invisible-only names and format characters
refused, visible ones kept exactly, and none of them ever becoming a link where it is shown."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from tests.fixtures.names import AUTOLINK, rendered_text

CF = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]


@pytest.mark.parametrize(
    "name",
    [
        "\u200b",
        "\u3164",
        " \u3164\u2800 ",
        "\u115f\u1160",
        "\u034f",
        "\ufe0f\ufe0f",
        "\u3000",
        "\u0301",
    ],
    ids=[
        "ZWSP",
        "hangul-filler",
        "filler-braille-blank",
        "choseong-filler",
        "CGJ",
        "VS16",
        "ideographic-space",
        "combining-acute",
    ],
)
def test_invisible_only_names_are_refused(name):
    from leaderboard.errors import MetadataError
    from leaderboard.metadata import Metadata

    with pytest.raises(MetadataError) as err:
        Metadata.from_dict({"name": name})
    assert "name" in err.value.fields
    with pytest.raises(MetadataError) as err:
        Metadata.from_dict({"name": "Fine", "team": name})
    assert "team" in err.value.fields


def test_every_format_character_and_nul_is_refused_in_names():
    from leaderboard.errors import MetadataError
    from leaderboard.metadata import Metadata

    assert "\u061c" in CF and len(CF) > 150
    for ch in [*CF, "\x00"]:
        for fld in ("name", "team", "description"):
            with pytest.raises(MetadataError) as err:
                Metadata.from_dict({"name": "Fine", fld: f"ab{ch}cd"})
            assert fld in err.value.fields, (fld, f"U+{ord(ch):04X}")
            assert f"U+{ord(ch):04X}" in err.value.fields[fld]


@pytest.mark.parametrize(
    "name",
    ["モデルA", "GPT-4o mini", "🤖 bot", "Ｘ", "e\u0301tude", "Visit https://phish.example/verify"],
)
def test_visible_names_are_kept_exactly(name):
    from leaderboard.metadata import Metadata

    assert Metadata.from_dict({"name": name}).name == name


@pytest.mark.parametrize(
    "name",
    [
        "Visit https://phish.example/verify",
        "HTTP://PHISH.EXAMPLE",
        "see www.phish.example now",
        "mail me: a.b+c@phish.example",
        "[x](https://phish.example)",
        "<https://phish.example>",
    ],
)
def test_names_never_become_links(name):
    from views.text import escape_markdown

    assert AUTOLINK.search(rendered_text(name))  # the check would see a link in the raw name
    shown = rendered_text(escape_markdown(name))
    assert not AUTOLINK.search(shown), shown
    assert shown.replace("\u2060", "") == name  # and it reads exactly as typed
