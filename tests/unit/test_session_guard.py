"""views/session_guard.py's answer to Streamlit's ``load_git_info``: nothing, even from a
checkout with a remote, whose branch and files Streamlit's own handler would send to the page.
The websocket-level checks (clear_cache, the session-start frame) are in
tests/browser/test_exposure.py."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace


def test_a_page_learns_nothing_of_the_checkout(tmp_path):
    from streamlit.runtime.app_session import AppSession

    from views import session_guard

    repo = tmp_path / "site"
    repo.mkdir()
    (repo / "streamlit_app.py").write_text("", encoding="utf-8")
    (repo / "untracked-secret.txt").write_text("", encoding="utf-8")
    for cmd in (
        ["init", "-q", "-b", "main"],
        ["remote", "add", "origin", "https://github.com/example/site.git"],
        ["add", "streamlit_app.py"],
        ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "x"],
        ["update-ref", "refs/remotes/origin/main", "HEAD"],
        ["branch", "-q", "--set-upstream-to=origin/main"],
    ):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, capture_output=True)
    sent = []
    page = SimpleNamespace(
        _script_data=SimpleNamespace(main_script_path=str(repo / "streamlit_app.py")),
        _enqueue_forward_msg=sent.append,
    )
    if not getattr(AppSession, "_etc_guarded", False):  # Streamlit's own handler tells all
        AppSession._handle_git_information_request(page)
        assert "untracked-secret.txt" in str(sent) and "main" in str(sent)
        sent.clear()
    session_guard.install()
    AppSession._handle_git_information_request(page)
    assert sent == []
