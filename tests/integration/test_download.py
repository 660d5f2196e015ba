"""`etclib download` against a loopback HTTP server serving an archive built by the test."""

import http.server
import io
import tarfile
import threading

import pytest

from etclib.cli import main
from etclib.core.errors import DownloadError
from etclib.data.corpus import load_corpus
from etclib.data.download import download


def make_archive(root, extra=None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(root, arcname="ETCDataset-6c4f7e1/etc")
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture
def server():
    state = {"body": b"", "status": 200, "hits": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            state["hits"] += 1
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            self.wfile.write(state["body"])

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}/etc.tar.gz"
    yield state
    httpd.shutdown()


def test_download_unpacks_and_loads(tiny_corpus, tmp_path, server, monkeypatch, capsys):
    server["body"] = make_archive(tiny_corpus)
    monkeypatch.setenv("ETC_DATASET_URL", server["url"])
    assert main(["download", "--dest", str(tmp_path / "d"), "--quiet"]) == 0
    path = capsys.readouterr().out.strip()
    assert path.endswith("ETCDataset/etc")
    assert len(load_corpus(path).dialogues) == 8
    # Present already: no second request.
    download(tmp_path / "d", quiet=True)
    assert server["hits"] == 1


def test_unsafe_archive_is_refused(tiny_corpus, tmp_path, server, monkeypatch):
    server["body"] = make_archive(tiny_corpus, {"../evil.txt": b"x"})
    monkeypatch.setenv("ETC_DATASET_URL", server["url"])
    with pytest.raises(DownloadError, match="unsafe path"):
        download(tmp_path / "d", quiet=True)
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "d" / "ETCDataset").exists()


def test_http_error_and_garbage(tmp_path, server, monkeypatch):
    monkeypatch.setenv("ETC_DATASET_URL", server["url"])
    server["status"] = 404
    with pytest.raises(DownloadError, match="Cannot download"):
        download(tmp_path / "d", quiet=True)
    server["status"], server["body"] = 200, b"not a tarball"
    with pytest.raises(DownloadError, match="not a valid tar archive"):
        download(tmp_path / "d", quiet=True)
    assert not (tmp_path / "d" / "ETCDataset").exists()
