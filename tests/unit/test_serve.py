"""serve.py, the site's launcher: Streamlit's `streamlit run streamlit_app.py` with the app's
modules imported first (the browser tests and benchmarks/site.py serve the site through it)."""

from __future__ import annotations

import sys

import pytest

import serve


def test_the_launcher_imports_what_the_app_imports_then_runs_streamlit(monkeypatch):
    monkeypatch.setenv("ETC_WARM_UP", "0")
    names = serve.app_imports()
    assert names[:2] == ["pathlib", "streamlit"]  # streamlit_app.py's own order
    assert {"leaderboard", "views.board", "views.navigation"} <= set(names)
    order = []
    real_import = serve.importlib.import_module

    def recorded(name, package=None):
        if package is None:
            order.append(name)
        return real_import(name, package)

    monkeypatch.setattr(serve.importlib, "import_module", recorded)
    from streamlit.web import cli

    monkeypatch.setattr(cli, "main", lambda args, prog_name: order.append((args, prog_name)))
    serve.main(["--server.port", "8599"])
    # every module first (other imports meanwhile aside), then Streamlit's own command line
    # with the options as given
    seen = [x for x in order if isinstance(x, tuple) or x in names]
    seen = [x for i, x in enumerate(seen) if x not in seen[:i]]
    assert seen == [*names, (["run", str(serve.APP), "--server.port", "8599"], "streamlit")]
    assert all(name in sys.modules for name in names)


def test_the_launcher_returns_large_buffers_before_serving(monkeypatch):
    from streamlit.web import cli

    monkeypatch.setenv("ETC_WARM_UP", "0")
    order = []
    monkeypatch.setattr(serve, "return_large_buffers", lambda: order.append("malloc"))
    monkeypatch.setattr(serve, "app_imports", lambda: [])
    monkeypatch.setattr(cli, "main", lambda *a, **k: order.append("streamlit"))
    serve.main([])
    assert order == ["malloc", "streamlit"]


@pytest.mark.parametrize(("setting", "started"), [(None, True), ("1", True), ("0", False)])
def test_the_launcher_warms_the_site_up_unless_told_not_to(monkeypatch, setting, started):
    """A thread visits the pages once the server answers (tests/browser/test_fresh_clone.py
    sees it do so through `make run`), before Streamlit's command line takes over."""
    from streamlit.web import cli

    if setting is None:
        monkeypatch.delenv("ETC_WARM_UP", raising=False)
    else:
        monkeypatch.setenv("ETC_WARM_UP", setting)
    order = []

    class Thread:
        def __init__(self, target, name, daemon):
            assert target is serve._warm_up_when_served and daemon
            self.name = name

        def start(self):
            order.append(self.name)

    monkeypatch.setattr(serve.threading, "Thread", Thread)
    monkeypatch.setattr(serve, "app_imports", lambda: [])
    monkeypatch.setattr(cli, "main", lambda *a, **k: order.append("streamlit"))
    serve.main([])
    assert order == (["warm-up", "streamlit"] if started else ["streamlit"])


def test_streamlit_still_offers_no_switch_for_the_metrics_endpoint():
    """docs/deploy.md says the proxy must keep /_stcore/metrics private because Streamlit has no
    option to turn it off; when a Streamlit upgrade adds one, set it and update the docs."""
    from streamlit import config

    from tests.conftest import REPO
    from tests.proxy import BLOCKED

    options = [
        k
        for k in config._config_options_template
        if k.lower().startswith("server.") and "metric" in k.lower()
    ]
    assert options == ["server.unsafeMetricsUserAttributes"], options
    assert config.get_option("server.unsafeMetricsUserAttributes") == []
    assert config.get_option("server.enableExpensiveMemoryStats") is False
    deploy = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert "location = /_stcore/metrics { return 404; }" in deploy
    assert BLOCKED.match("/_stcore/metrics") and BLOCKED.match("/_stcore/metrics?families=x")
    assert not BLOCKED.match("/_stcore/metricsx") and not BLOCKED.match("/_stcore/health")
