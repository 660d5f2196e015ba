"""The documentation a visitor reaches from a page: a link to the rendered document in the
repository (or, without one, the site's Documentation page, whose links stay inside the site),
and the README and docs/site.md naming every page the site declares."""

from __future__ import annotations

import pytest

from tests.conftest import REPO


def test_doc_link_is_the_rendered_doc_in_the_repository(monkeypatch):
    from views import docs

    monkeypatch.setenv("ETC_REPOSITORY_URL", "https://example.test/org/etc/")
    assert docs.doc_url("causes.md") == "https://example.test/org/etc/blob/main/docs/causes.md"
    assert docs.doc_link("leaderboard.md#tracks", "the tracks") == (
        "[the tracks](https://example.test/org/etc/blob/main/docs/leaderboard.md#tracks)"
    )
    with pytest.raises(ValueError, match="docs/nonesuch.md does not exist"):
        docs.doc_url("nonesuch.md")


def test_doc_link_without_a_repository_opens_the_sites_documentation_page(monkeypatch):
    from views import docs

    monkeypatch.delenv("ETC_REPOSITORY_URL", raising=False)
    monkeypatch.setattr(docs, "_declared_repository", lambda: None)
    assert docs.doc_url("causes.md") == "docs?doc=causes.md"
    assert docs.doc_link("leaderboard.md#tracks", "the tracks") == (
        "[the tracks](docs?doc=leaderboard.md#tracks)"
    )


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("See [deploying](deploy.md).", "See [deploying](docs?doc=deploy.md)."),
        ("[the rules](judge.md#rules-in-code)", "[the rules](docs?doc=judge.md#rules-in-code)"),
        ("[a section](#tracks) and [web](https://example.test/a.md)", None),
        ("The [README](../README.md) says so.", "The README says so."),
    ],
)
def test_the_documentation_page_keeps_links_inside_the_site(tmp_path, monkeypatch, line, shown):
    from views import docs

    monkeypatch.delenv("ETC_REPOSITORY_URL", raising=False)
    monkeypatch.setattr(docs, "_declared_repository", lambda: None)
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(b"png")
    (tmp_path / "x.md").write_text(f"# X\n\n{line}\n\n![a chart](img/a.png)\n\nafter\n")
    monkeypatch.setattr(docs, "DOCS", tmp_path)
    parts = docs.rendered("x.md")
    assert [kind for kind, _ in parts] == ["markdown", "image", "markdown"]
    assert parts[0][1].splitlines()[-1] == (line if shown is None else shown)
    assert parts[1][1] == (tmp_path / "img" / "a.png").resolve()
    assert docs.doc_title("x.md") == "X"
    with pytest.raises(ValueError, match="no document"):
        docs.rendered("../README.md")


def test_the_documentation_page_renders_a_doc_and_refuses_other_names():
    from streamlit.testing.v1 import AppTest

    page = str(REPO / "site_pages" / "docs.py")
    at = AppTest.from_file(page, default_timeout=60)
    at.query_params["doc"] = "judge.md"
    at.run()
    assert not at.exception
    assert any("LLM judge" in h.value for h in at.markdown)
    at = AppTest.from_file(page, default_timeout=60)
    at.query_params["doc"] = "../README.md"
    at.run()
    assert not at.exception
    assert "There is no document named" in at.error[0].value
    assert any("docs?doc=site.md" in m.value for m in at.markdown)


def test_readme_and_site_doc_list_every_page():
    """README's site paragraph and docs/site.md's page table name every page streamlit_app.py
    declares, and README counts them right."""
    from tests.conftest import REPO
    from tests.serve import site_pages

    titles = [title for _, title in site_pages()]  # the navigation's pages (not hidden ones)
    assert len(titles) == 9 and {"Causes", "Compare"} <= set(titles)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    site = (REPO / "docs" / "site.md").read_text(encoding="utf-8")
    assert "serves nine pages" in readme
    for title in titles:
        assert f"**{title}**" in readme, title
        assert f"\n| {title} |" in site, title
