"""The leaderboard: submitting, the scoring queue, limits, crash recovery, moderation, export."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import MAX_FILE_BYTES, dumps_jsonl
from leaderboard.db import open_db
from tests.conftest import REPO
from tests.fixtures.board import concurrently, count, process_env, tiny_fixture, variant  # noqa: F401 - tiny_fixture: the fixture "tiny"


def jsonl(items, text=lambda it: it.reference) -> bytes:
    return dumps_jsonl((it.key, text(it)) for it in items).encode("utf-8")


META = {"name": "My model", "team": "Lab", "contact": "me@example.org", "setting": "few-shot"}


def test_submit_then_score_flow(tiny):
    receipt = lb.submit(jsonl(tiny), META, file_name="preds.jsonl")
    assert not receipt.duplicate and receipt.status == "queued" and receipt.queue_position == 1
    st = lb.status(receipt.id)
    assert st["status"] == "queued" and st["pending"] == ["bleu", "rouge", "category"]
    assert lb.process_jobs() == 1
    st = lb.status(receipt.id)
    assert st["status"] == "scored" and st["pending"] == [] and st["queue_position"] is None
    assert [h["status"] for h in st["history"]] == ["queued", "scoring", "scored"]

    board = lb.ranking()
    assert list(board["id"]) == [receipt.id]
    row = board.iloc[0]
    assert row["bleu4"] == pytest.approx(100) and row["rougeL"] == pytest.approx(100)
    assert row["rank"] == 1 and row["rank_band"] == "1"
    assert board.attrs["sort_by"] == "rougeL"  # no judge, no BERTScore: the last fallback
    assert "contact" not in board.columns

    d = lb.detail(receipt.id)
    assert "contact" not in d["submission"]
    assert set(d["breakdown"]) == {"role", "category", "turn"}
    assert set(d["breakdown"]["turn"]) == {"1", "2", "3", "4", "5"}
    assert d["breakdown"]["role"]["speaker"]["n_items"] == 10
    assert d["verbosity"]["pred_chars"] == pytest.approx(sum(len(it.reference) for it in tiny) / 20)
    assert d["scores"]["bleu"]["signature"]["tokenizer"].startswith("ja-mecab")
    assert d["scores"]["rouge"]["intervals"]["rougeL"] == pytest.approx((100, 100))

    items = lb.per_item(receipt.id)
    assert len(items) == 20
    assert (items["prediction"] == items["reference"]).all()
    assert items["rougeL"].tolist() == [100.0] * 20


def test_eight_concurrent_submissions_all_stored_and_scored(tiny):
    pool = lb.start_workers(3)
    assert lb.start_workers() is pool  # idempotent per process
    receipts, errors = [], []

    def one(n: int) -> None:
        try:
            receipts.append(
                lb.submit(variant(tiny, n), {"name": f"model {n}", "contact": f"u{n}@x.org"})
            )
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert pool.wait_idle(timeout=120)
    ids = {r.id for r in receipts}
    assert len(ids) == 8 and not any(r.duplicate for r in receipts)
    assert count("submissions") == 8
    assert count("predictions") == 8 * 20
    assert count("jobs", "status = 'done'") == 8 and count("jobs") == 8
    assert count("scores") == 24  # bleu, rouge and category for each
    assert count("item_scores") == 24 * 20
    assert {lb.status(i)["status"] for i in ids} == {"scored"}
    assert len(lb.ranking()) == 8
    lb.stop_workers()
    assert not pool.running


def test_the_same_file_submitted_concurrently_is_stored_once(tiny):
    results, errors = concurrently(
        8, lambda k: lb.submit(jsonl(tiny), {**META, "contact": f"{k}@x.org"})
    )
    assert errors == [] and len({r.id for r in results}) == 1
    assert sum(not r.duplicate for r in results) == 1
    assert count("submissions") == 1 and count("predictions") == 20


def test_same_file_again_returns_the_existing_submission(tiny, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "1")
    first = lb.submit(jsonl(tiny), META)
    again = lb.submit(jsonl(tiny), {**META, "name": "Other name"})  # no quota used
    assert again.id == first.id and again.duplicate
    assert count("submissions") == 1 and count("predictions") == 20 and count("jobs") == 1


BAD_FILES = [
    ("missing item", lambda its: jsonl(its[:-1]), "no prediction"),
    ("repeated item", lambda its: jsonl(its + its[:1]), "repeats line 1"),
    ("invalid json", lambda its: jsonl(its) + b"{not json}\n", "line 21"),
    ("not utf-8", lambda its: jsonl(its).replace("話".encode(), b"\xff\xfe", 1), "UTF-8"),
    ("empty", lambda its: b"", "empty"),
    ("wrong type", lambda its: jsonl(its).replace(b'"turn": 1', b'"turn": "one"', 1), "integer"),
    ("too big", lambda its: b" " * (MAX_FILE_BYTES + 1), "limit"),
]


@pytest.mark.parametrize("label,make,needle", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_files_are_refused_and_nothing_is_stored(tiny, label, make, needle):
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(make(tiny), META, file_name="preds.jsonl")
    assert info.value.problems, label
    assert needle in str(info.value)
    assert count("submissions") == 0 and count("predictions") == 0 and count("jobs") == 0


def test_a_file_of_the_wrong_split_names_its_lines(tiny, tiny_corpus):
    valid = split_items(load_corpus(tiny_corpus), "valid")
    with pytest.raises(lb.SubmissionError) as info:
        lb.submit(jsonl(valid), META)
    first = info.value.problems[0]
    assert first.line == 1 and "valid split" in first.message


BAD_METADATA = [
    ({"team": "x"}, "name"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": "x" * 81}, "name"),
    ({"name": "ok", "model_url": "javascript:alert(1)"}, "model_url"),
    ({"name": "ok", "paper_url": "ftp://example.org/p.pdf"}, "paper_url"),
    ({"name": "ok", "paper_url": "https://"}, "paper_url"),
    ({"name": "ok", "paper_url": "https://exa mple.org"}, "paper_url"),
    ({"name": "bell\x07"}, "name"),
    ({"name": "ok", "team": "evil\u202eteam"}, "team"),
    ({"name": "ok", "team": "two\nlines"}, "team"),
    ({"name": "ok", "description": "nul\x00"}, "description"),
    ({"name": "ok", "setting": "two-shot"}, "setting"),
    ({"name": "ok", "saw_test": "maybe"}, "saw_test"),
    ({"name": "ok", "nmae": "typo"}, "nmae"),
    ({"name": 5}, "name"),
    ({"name": "ok", "contact": "a b@c.d"}, "contact"),
    ({"name": "ok", "description": "x" * 2001}, "description"),
]


@pytest.mark.parametrize("meta,field", BAD_METADATA)
def test_bad_metadata_is_refused_and_nothing_is_stored(tiny, meta, field):
    with pytest.raises(lb.MetadataError) as info:
        lb.submit(jsonl(tiny), meta)
    assert field in info.value.fields
    assert count("submissions") == 0


def test_metadata_is_stored_exactly_as_given(tiny):
    meta = {
        "name": "<b>Bold</b> & 日本語",
        "team": "チーム",
        "contact": "someone@example.org",
        "model_url": "https://huggingface.co/org/model?x=1",
        "paper_url": "http://example.org/paper.pdf",
        "description": "line one\n\tline two <script>alert(1)</script>",
        "setting": "fine-tuned",
        "saw_test": "no",
    }
    receipt = lb.submit(jsonl(tiny), meta)
    row = lb.detail(receipt.id)["submission"]
    for key, value in meta.items():
        if key != "contact":
            assert row[key] == value
    admin = open_db().query("SELECT contact FROM submissions WHERE id = ?", [receipt.id])
    assert admin[0][0] == "someone@example.org"


@pytest.mark.embedded_only  # PostgreSQL's many processes: tests/integration/test_leases.py
def test_a_second_process_reads_and_writes_while_this_one_holds_the_board(tiny, tiny_corpus):
    """The embedded board is shared: while this process has it open (as the site does), a
    command in another process reads it and writes to it."""
    receipt = lb.submit(jsonl(tiny), META)
    db = open_db()  # this process holds the database open
    env = {**process_env(tiny_corpus), "ETC_ADMIN_TOKEN": "t" * 30}
    show = subprocess.run(
        [sys.executable, "-m", "leaderboard", "status", receipt.id],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert show.returncode == 0, show.stderr
    assert "queued" in show.stdout and "Traceback" not in show.stderr
    hide = subprocess.run(
        [sys.executable, "-m", "leaderboard", "admin", "hide", receipt.id, "--note", "spam"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert hide.returncode == 0, hide.stdout + hide.stderr
    # this process sees the other's write at once (its cached board is dropped)
    assert db.query("SELECT visibility FROM submissions WHERE id = ?", [receipt.id]) == [
        ("hidden",)
    ]
    assert count("moderation_log") == 1


def test_bertscore_stage_runs_after_lexical_and_becomes_the_ranking_metric(
    tiny, tiny_bert, monkeypatch
):
    monkeypatch.setenv("ETC_BERTSCORE_MODEL", str(tiny_bert))
    monkeypatch.setenv("ETC_BERTSCORE_LAYER", "2")
    assert lb.configured_stages() == ["lexical", "bertscore"]
    a = lb.submit(jsonl(tiny), {**META, "contact": "a@x.org"})
    b = lb.submit(variant(tiny, 20), {**META, "contact": "b@x.org"})
    assert lb.process_jobs(max_jobs=1) == 1  # lexical of a
    st = lb.status(a.id)
    assert st["status"] == "partially scored" and st["pending"] == ["bertscore"]
    assert "pending: bertscore" in st["message"]
    assert a.id in set(lb.ranking()["id"])  # visible with lexical scores already
    lb.process_jobs()
    assert lb.status(a.id)["status"] == lb.status(b.id)["status"] == "scored"
    board = lb.ranking()
    assert board.attrs["sort_by"] == "bertscore"
    assert list(board["id"]) == [a.id, b.id]
    assert board.iloc[0]["bertscore"] == pytest.approx(100, abs=1e-3)
    assert "model:" + str(tiny_bert) in board.attrs["signatures"]["bertscore"]["bertscore"]


def test_a_failing_heavy_stage_leaves_a_partial_score_with_the_reason(tiny, monkeypatch):
    monkeypatch.setenv("ETC_BERTSCORE_MODEL", str(Path("/nonexistent/bert")))
    receipt = lb.submit(jsonl(tiny), META)
    lb.process_jobs()
    st = lb.status(receipt.id)
    assert st["status"] == "partially scored" and st["pending"] == []
    assert "bertscore" in st["failed_metrics"]
    assert "bertscore failed: Cannot load the BERTScore model" in st["message"]
    assert not lb.ranking()["rougeL"].isna().any()


def test_admin_operations_need_the_token(tiny, monkeypatch):
    receipt = lb.submit(jsonl(tiny), META)
    with pytest.raises(lb.AdminError, match="disabled: set ETC_ADMIN_TOKEN"):
        lb.hide(receipt.id, "anything")
    monkeypatch.setenv("ETC_ADMIN_TOKEN", "s3cret-admin-token-0123456789")
    for token in ("wrong", "", None, "s3cret-admin-token-0123456789 "):
        with pytest.raises(lb.AdminError, match="Wrong admin token"):
            lb.hide(receipt.id, token)
    with pytest.raises(lb.NotFoundError):
        lb.hide("nope", "s3cret-admin-token-0123456789")
    assert open_db().query("SELECT visibility FROM submissions")[0][0] == "public"


def test_hide_unhide_delete_and_rescore(tiny, monkeypatch):
    monkeypatch.setenv("ETC_ADMIN_TOKEN", "s3cret-admin-token-0123456789")
    a = lb.submit(jsonl(tiny), {**META, "contact": "a@x.org"})
    b = lb.submit(variant(tiny, 10), {**META, "name": "B", "contact": "b@x.org"})
    lb.process_jobs()
    assert set(lb.ranking()["id"]) == {a.id, b.id}

    lb.hide(b.id, "s3cret-admin-token-0123456789", note="spam?")
    assert set(lb.ranking()["id"]) == {a.id}
    assert b.id not in lb.export_csv()
    assert lb.status(b.id)["visibility"] == "hidden"  # its owner still sees it
    lb.unhide(b.id, "s3cret-admin-token-0123456789")
    assert set(lb.ranking()["id"]) == {a.id, b.id}

    before = count("scores", "submission_id = ?", [a.id])
    assert lb.rescore(a.id, "s3cret-admin-token-0123456789")
    lb.process_jobs()
    assert count("scores", "submission_id = ?", [a.id]) == before + 3  # added, none replaced
    assert lb.status(a.id)["status"] == "scored"
    assert len(lb.detail(a.id)["history"]) == before + 3

    lb.delete(b.id, "s3cret-admin-token-0123456789", note="duplicate")
    with pytest.raises(lb.NotFoundError):
        lb.status(b.id)
    assert set(lb.ranking()["id"]) == {a.id}
    again = lb.submit(variant(tiny, 10), {**META, "name": "B", "contact": "b@x.org"})
    assert again.id != b.id and not again.duplicate  # a deleted file is no duplicate
    assert count("submissions") == 3  # soft delete: the row is still there
    log = open_db().query("SELECT action FROM moderation_log ORDER BY happened_at")
    assert [r[0] for r in log] == ["hide", "unhide", "rescore", "delete"]
    admin = lb.admin_submissions("s3cret-admin-token-0123456789")
    assert "contact" in admin.columns and len(admin) == 3


def test_csv_export_is_formula_safe_and_private_fields_stay_private(tiny):
    evil = {
        "name": '=HYPERLINK("http://x","y")',
        "team": "+cmd|' /C calc'!A0",
        "contact": "secret@example.org",
        "description": "-2+3",
    }
    receipt = lb.submit(jsonl(tiny, lambda it: "@SUM(1)" if it.turn == 1 else "\tx"), evil)
    lb.process_jobs()
    for what, kwargs in (("board", {}), ("items", {"submission_id": receipt.id}), ("items", {})):
        text = lb.export_csv(what, **kwargs)
        rows = list(csv.reader(io.StringIO(text)))
        assert len(rows) > 1
        for row in rows:
            for cell in row:
                assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (what, cell)
        assert "secret@example.org" not in text
    board = list(csv.DictReader(io.StringIO(lb.export_csv("board"))))
    assert board[0]["name"] == "'" + evil["name"]
    assert board[0]["team"] == "'" + evil["team"]
    assert board[0]["description"] == "'-2+3"
    items = list(csv.DictReader(io.StringIO(lb.export_csv("items", submission_id=receipt.id))))
    assert {r["prediction"] for r in items} == {"'@SUM(1)", "'\tx"}
    data = json.loads(lb.export_json("board"))
    assert data["board"][0]["name"] == evil["name"]  # JSON keeps the value as given
    assert "secret@example.org" not in json.dumps(data)
    assert data["sort_by"] == "rougeL" and data["signatures"]["bleu"]["split"] == "test"


class FakeHfApi:
    calls: list[dict] = []
    fail = False

    def __init__(self, token=None):
        self.token = token

    def upload_file(self, **kwargs):
        if FakeHfApi.fail:
            raise RuntimeError("401 Unauthorized")
        FakeHfApi.calls.append({"token": self.token, **kwargs})


def test_push_to_hub_uploads_the_public_export(tiny, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHfApi)
    FakeHfApi.calls, FakeHfApi.fail = [], False
    with pytest.raises(lb.LeaderboardError, match="ETC_LB_HUB_REPO"):
        lb.push_to_hub()
    monkeypatch.setenv("ETC_LB_HUB_REPO", "org/etc-board")
    monkeypatch.setenv("HF_TOKEN", "hf_test")
    receipt = lb.submit(jsonl(tiny), META)
    lb.process_jobs()  # the worker pushes after each job when configured
    assert [c["path_in_repo"] for c in FakeHfApi.calls] == ["leaderboard.json", "leaderboard.csv"]
    call = FakeHfApi.calls[0]
    assert call["repo_id"] == "org/etc-board" and call["repo_type"] == "dataset"
    assert call["token"] == "hf_test"
    assert json.loads(call["path_or_fileobj"])["board"][0]["id"] == receipt.id
    FakeHfApi.fail = True
    with pytest.raises(lb.LeaderboardError, match="401 Unauthorized"):
        lb.push_to_hub()
    pushes = open_db().query("SELECT ok FROM hub_pushes ORDER BY happened_at")
    assert [p[0] for p in pushes] == [True, False]


def _copy_scores_with_signature(submission_id: str, group: str, change: dict, value: float):
    """Add a score row for ``group`` as if scored by another version (new signature, values)."""
    db = open_db()
    (score_id, sig, scores) = db.query(
        "SELECT id, signature, scores FROM scores WHERE submission_id = ? AND metric_group = ? "
        "ORDER BY id DESC LIMIT 1",
        [submission_id, group],
    )[0]
    sig = json.dumps({**json.loads(sig), **change}, sort_keys=True)
    scores = json.dumps({k: value for k in json.loads(scores)})
    with db.write() as cur:
        new = cur.dialect.next_id(cur, "score_ids")
        cur.execute(
            "INSERT INTO scores SELECT ?, submission_id, job_id, metric_group, ?, created_at, "
            "n_items, ?, extras, breakdown FROM scores WHERE id = ?",
            [new, sig, scores, score_id],
        )
        cur.execute(
            "INSERT INTO score_arrays SELECT ?, name, dtype, shape, data FROM score_arrays "
            "WHERE score_id = ?",
            [new, score_id],
        )
    db.invalidate()


def test_scores_with_different_signatures_are_never_mixed(tiny):
    ids = [lb.submit(variant(tiny, n), {**META, "contact": f"{n}@x.org"}).id for n in (0, 5, 10)]
    lb.process_jobs()
    first = lb.ranking().set_index("id")
    old = first["rouge1"]
    _copy_scores_with_signature(ids[0], "rouge", {"etclib": "9.9"}, 1.0)
    board = lb.ranking().set_index("id")
    assert board.loc[ids[0], "rouge1"] == pytest.approx(old[ids[0]])  # majority signature
    assert board.loc[ids[0], "other_signatures"] == []  # it has a row under the current one
    other = lb.other_scores()
    assert list(other["id"]) == [ids[0]] and other.iloc[0]["rouge1"] == 1.0
    assert json.loads(other.iloc[0]["signature"])["etclib"] == "9.9"
    for sid in ids[1:]:
        _copy_scores_with_signature(sid, "rouge", {"etclib": "9.9"}, 2.0)
    board = lb.ranking().set_index("id")
    assert board.attrs["signatures"]["rouge"]["etclib"] == "9.9"
    assert board.loc[ids[0], "rouge1"] == 1.0 and board.loc[ids[1], "rouge1"] == 2.0
    assert board.loc[ids[0], "other_signatures"] == []
    assert board.loc[ids[0], "bleu1"] == pytest.approx(first.loc[ids[0], "bleu1"])  # untouched
    assert list(lb.other_scores()["rouge1"]) == [pytest.approx(old[i]) for i in ids]


def test_cli_submit_status_and_errors(tiny, tmp_path, capsys):
    from leaderboard.__main__ import main

    path = tmp_path / "preds.jsonl"
    path.write_bytes(jsonl(tiny))
    assert main(["submit", str(path), "--name", "CLI model", "--score", "--create"]) == 0
    out = capsys.readouterr().out
    sid = out.split()[0]
    assert "status: scored" in out
    assert main(["status", sid]) == 0 and "scored" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(jsonl(tiny[:-1]))
    assert main(["submit", str(bad), "--name", "x"]) == 1
    err = capsys.readouterr().err
    assert "refused" in err and "Traceback" not in err
    assert main(["submit", str(path), "--name", "x", "--paper-url", "file:///etc/passwd"]) == 1
    assert "paper_url" in capsys.readouterr().err
    assert main(["status", "nope"]) == 5
    assert main(["admin", "hide", sid]) == 6
    out_csv = tmp_path / "board.csv"
    assert main(["export", "--format", "csv", "--out", str(out_csv)]) == 0
    assert sid in out_csv.read_text(encoding="utf-8")


FORMULA_START = ("=", "+", "-", "@", "\t")


# Texts whose line breaks once split a CSV row, each hiding a formula on a later line.
HOSTILE_TEXTS = [
    "ok\r=2+5",
    "x\n=cmd|' /C calc'!A0",
    "a\r\n@SUM(1)",
    "\r+1",
    "line\r\r-2+3",
    "怒り\n\t=1",
    "",
    "plain",
]


def cell_lines(cell: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", cell)


def test_csv_export_keeps_one_row_per_item_and_guards_every_line(tiny):
    texts = {it.key: HOSTILE_TEXTS[n % len(HOSTILE_TEXTS)] for n, it in enumerate(tiny)}
    data = dumps_jsonl((it.key, texts[it.key]) for it in tiny).encode("utf-8")
    receipt = lb.submit(data, META, file_name="hostile.jsonl")
    assert lb.process_jobs() == 1
    assert lb.status(receipt.id)["status"] == "scored"

    # The site's "This entry's items (CSV)" button serves export_csv("items", submission_id=...);
    # the all-items export is the CLI's and the Hub's.
    for kwargs in ({"submission_id": receipt.id}, {}):
        text = lb.export_csv("items", **kwargs)
        rows = list(csv.reader(io.StringIO(text, newline="")))
        header, body = rows[0], rows[1:]
        assert len(body) == len(tiny), kwargs  # one row per item, whatever the text holds
        assert all(len(row) == len(header) for row in body)
        for row in rows:
            for cell in row:
                for line in cell_lines(cell):
                    assert not line.startswith(FORMULA_START), (kwargs, cell)
        got = {row[header.index("prediction")] for row in body}
        assert "ok\r'=2+5" in got and "x\n'=cmd|' /C calc'!A0" in got and "'\r'+1" in got
        # The guard only adds apostrophes: without them, the text is what the visitor uploaded.
        assert {c.replace("'", "") for c in got} == {t.replace("'", "") for t in HOSTILE_TEXTS}


def test_file_and_content_hashes_are_stored_apart(tiny):
    data = jsonl(tiny)
    sid = lb.submit(data, META).id
    file_sha, content_sha = open_db().query(
        "SELECT file_sha256, content_sha256 FROM submissions WHERE id = ?", [sid]
    )[0]
    assert file_sha == hashlib.sha256(data).hexdigest()
    body = [[*it.key, it.reference] for it in tiny]
    expected = hashlib.sha256(json.dumps(["etc-predictions-v1", body]).encode("ascii")).hexdigest()
    assert content_sha == expected
    crlf = data.replace(b"\n", b"\r\n")
    again = lb.submit(crlf, {**META, "contact": "other@x.org"})
    assert again.duplicate and again.id == sid


def test_seeding_an_unchanged_baseline_takes_the_fast_path(tiny, monkeypatch):
    from leaderboard import baselines

    submit = sys.modules["leaderboard.submit"]  # the package's `submit` is the function
    first = baselines.seed_computed(["constant"])
    assert first["constant"]["added"]

    def refuse(*args, **kwargs):
        raise AssertionError("store_submission called for an unchanged baseline")

    monkeypatch.setattr(submit, "store_submission", refuse)
    again = baselines.seed_computed(["constant"])
    assert again == {"constant": {"id": first["constant"]["id"], "added": False}}
