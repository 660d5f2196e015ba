"""A submitter's own entries (leaderboard.owners and ``python -m leaderboard entry``): owned by
the signed-in account or the private edit key, renamed, links and model facts edited, made
private, public again, withdrawn; every change in the history; nobody else sees or changes
them; the quota left; a duplicate of a baseline names it; the standing after scoring."""

from __future__ import annotations

import json

import pytest

import leaderboard as lb
from etclib.data.corpus import load_corpus
from etclib.data.task import items as split_items
from etclib.tracks.predictions import dumps_jsonl
from leaderboard import samples
from leaderboard.__main__ import main as lb_main

ADMIN = "a-test-admin-token-of-32-characters"
ME = "https://issuer.example|subject-1"  # a signed-in account's key (issuer and subject)


@pytest.fixture
def its(tiny_corpus, monkeypatch):
    monkeypatch.setenv("ETC_DATA_DIR", str(tiny_corpus))
    monkeypatch.setenv("ETC_LB_BOOTSTRAP", "50")
    monkeypatch.setenv("ETC_ADMIN_TOKEN", ADMIN)
    samples.forget()
    yield split_items(load_corpus(tiny_corpus), "test")
    samples.forget()


def upload(its, tag: str) -> bytes:
    return dumps_jsonl((it.key, f"{it.utterance[:4]}{tag}") for it in its).encode("utf-8")


def names_on_board() -> list[str]:
    return list(lb.ranking()["name"])


def test_the_owner_changes_an_entry_and_each_change_is_kept(its):
    got = lb.submit(upload(its, "と思った"), {"name": "Mine"}, submitter=ME, account="me")
    lb.process_jobs()
    assert got.edit_key.startswith(f"{got.id}.") and len(got.edit_key) > 40
    by_account, by_key = lb.Owner(account_key=ME), lb.Owner(edit_keys=(got.edit_key,))
    for owner in (by_account, by_key):
        assert list(lb.owned_entries(owner)["id"]) == [got.id]
    changes = {
        "name": "Mine v2",
        "paper_url": "https://example.org/paper",
        "parameters": "8",
        "open_weights": "yes",
        "licence": "Apache-2.0",
    }
    assert lb.update_entry(got.id, by_key, changes) == list(changes)
    row = lb.ranking().set_index("id").loc[got.id]
    assert {k: row[k] for k in changes} == changes
    with pytest.raises(lb.MetadataError) as refused:
        lb.update_entry(got.id, by_key, {"parameters": "lots", "contact": "x@example.org"})
    assert set(refused.value.fields) == {"parameters", "contact"}
    with pytest.raises(lb.MetadataError, match="marks the board's own computed rows"):
        lb.update_entry(got.id, by_key, {"name": "Mine (etclib)"})  # as at submission

    lb.set_entry_visibility(got.id, by_account, "private")
    assert "Mine v2" not in names_on_board() and got.id not in lb.export_csv("board")
    assert lb.owned_entries(by_account)["visibility"].tolist() == ["private"]
    lb.set_entry_visibility(got.id, by_account, "public")
    assert "Mine v2" in names_on_board()
    lb.set_entry_visibility(got.id, by_key, "withdrawn")
    assert "Mine v2" not in names_on_board()
    with pytest.raises(lb.LeaderboardError, match="withdrawn; it can no longer be changed"):
        lb.update_entry(got.id, by_key, {"name": "Back"})
    # kept for audit: the operators still list it, with its predictions' hash
    kept = lb.admin_submissions(ADMIN).set_index("id").loc[got.id]
    assert kept["visibility"] == "withdrawn" and kept["content_sha256"]

    history = lb.entry_history(got.id, by_key)
    changed = history[history["what"] != "status"]
    assert list(zip(changed["what"], changed["from"], changed["to"])) == [
        ("name", "Mine", "Mine v2"),
        ("paper_url", "", "https://example.org/paper"),
        ("parameters", "", "8"),
        ("open_weights", "", "yes"),
        ("licence", "", "Apache-2.0"),
        ("visibility", "public", "private"),
        ("visibility", "private", "public"),
        ("visibility", "public", "withdrawn"),
    ]
    assert list(changed["by"]) == ["edit key"] * 5 + ["signed-in account"] * 2 + ["edit key"]
    assert "scored" in set(history["to"])  # its statuses too


def test_nobody_else_sees_or_changes_an_entry(its):
    got = lb.submit(upload(its, "と感じた"), {"name": "Theirs"}, submitter=ME, account="me")
    other_key = lb.submit(upload(its, "かな"), {"name": "Other"}).edit_key
    forged = got.id + "." + other_key.partition(".")[2]  # another entry's secret
    strangers = [
        lb.Owner(account_key="https://issuer.example|subject-2"),
        lb.Owner(edit_keys=(forged,)),
        lb.Owner(edit_keys=(got.id + ".",)),
        lb.Owner(),
    ]
    unknown = str(lb.NotFoundError.entry(got.id))
    for stranger in strangers:
        assert got.id not in set(lb.owned_entries(stranger)["id"])
        for attempt, more in (
            (lb.update_entry, [{"name": "Stolen"}]),
            (lb.set_entry_visibility, ["withdrawn"]),
            (lb.entry_history, []),
        ):
            with pytest.raises(lb.NotFoundError) as refused:
                attempt(got.id, stranger, *more)
            assert str(refused.value) == unknown  # as if there were no such entry
    # only the hash of the key is stored
    stored = lb.open_db().query("SELECT edit_key_hash FROM submissions WHERE id = ?", [got.id])
    assert got.edit_key.partition(".")[2] not in stored[0][0]
    # the moderators' hiding is theirs to undo
    lb.hide(got.id, ADMIN)
    with pytest.raises(lb.LeaderboardError, match="moderators have hidden"):
        lb.set_entry_visibility(got.id, lb.Owner(account_key=ME), "public")


def test_quota_left_counts_todays_submissions(its, monkeypatch):
    monkeypatch.setenv("ETC_LB_DAILY_LIMIT", "3")
    assert lb.quota(ME)["left"] == 3
    lb.submit(upload(its, "1"), {"name": "a"}, submitter=ME)
    got = lb.submit(upload(its, "2"), {"name": "b"}, submitter=ME)
    lb.set_entry_visibility(got.id, lb.Owner(edit_keys=(got.edit_key,)), "withdrawn")
    left = lb.quota(ME)
    assert (left["used"], left["limit"], left["left"]) == (2, 3, 1)  # withdrawn ones count


def test_a_baselines_predictions_say_so_and_the_name_is_not_used(its):
    lb.seed_baselines(reported=False, backends=["copy"])
    before = lb.open_db().query("SELECT count(*) FROM submissions")[0][0]
    copy = dumps_jsonl((it.key, it.utterance) for it in its).encode("utf-8")
    got = lb.submit(copy, {"name": "My clever model"})
    assert got.duplicate and got.kind == "baseline" and got.edit_key is None
    assert got.name == "Copy of the utterance (etclib)"
    assert lb.open_db().query("SELECT count(*) FROM submissions")[0][0] == before


def test_standing_is_the_boards_row(its):
    ids = [lb.submit(upload(its, tag), {"name": tag}).id for tag in ("あ", "い", "う")]
    lb.process_jobs()
    board = lb.ranking().set_index("id")
    got = lb.standing(ids[1])
    row = board.loc[ids[1]]
    assert (got["rank"], got["rank_band"], got["of"]) == (row["rank"], row["rank_band"], 3)
    assert got["sort_by"] == board.attrs["sort_by"] == "rougeL"
    assert got["scores"]["rougeL"] == (row["rougeL"], row["rougeL_lo"], row["rougeL_hi"])
    assert "category_f1" in got["scores"]


def test_the_command_line_prints_the_key_and_changes_the_entry(its, tmp_path, capsys):
    path = tmp_path / "preds.jsonl"
    path.write_bytes(upload(its, "と思う"))
    args = ["submit", str(path), "--name", "CLI model", "--parameters", "0.35"]
    assert lb_main([*args, "--open-weights", "no", "--score", "--create"]) == 0
    out = capsys.readouterr().out
    key = next(line.split()[-1] for line in out.splitlines() if line.startswith("edit key:"))
    assert "rank 1 (band 1) of 1 by ROUGE-L ↑" in out and "ROUGE-L ↑" in out
    # the same file again: it says what became of the name given
    assert lb_main(["submit", str(path), "--name", "Again"]) == 0
    assert "nothing was stored, and the name “Again” was not used" in capsys.readouterr().out
    assert lb_main(["entry", key, "--name", "CLI model v2", "--licence", "MIT"]) == 0
    out = capsys.readouterr().out
    assert "changed: name, licence" in out and "name: 'CLI model' -> 'CLI model v2'" in out
    assert lb_main(["entry", key, "--withdraw", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["visibility"] == "withdrawn" and shown["parameters"] == "0.35"
    assert lb_main(["entry", key.partition(".")[0] + ".wrong", "--name", "x"]) == 5
    assert "was found: check the id" in capsys.readouterr().err
