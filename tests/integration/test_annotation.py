"""Study 2: judge decisions, annotator codes, answers, agreement and metric changes."""

from __future__ import annotations

import csv
import io
import math

import pytest

from etclib.core.errors import AccessDenied, AnnotationError, EtcError
from etclib.studies import annotation as ann
from etclib.studies.annotation import LABELS
from tests.fixtures.studies import ANNOTATION_ADMIN as ADMIN
from tests.fixtures.studies import (
    _annotation_admin,  # noqa: F401 - for every test here
    unit_rows,
)
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL


@pytest.mark.usefixtures("studies_db")
def test_add_decisions_validates_and_is_idempotent(tmp_path):
    assert ann.add_decisions(unit_rows()) == 8
    assert ann.add_decisions(unit_rows()) == 8  # same decisions again: replaced, not doubled
    subs = ann.submissions()
    assert subs["submission_id"].tolist() == ["sub-1"] and subs["decisions"].tolist() == [8]
    bad = unit_rows()
    bad[3] = {**bad[3], "label": "supported"}
    with pytest.raises(AnnotationError, match="decision row 4: label 'supported'"):
        ann.add_decisions(bad)
    with pytest.raises(AnnotationError, match="side 'both'"):
        ann.add_decisions([{**unit_rows()[0], "side": "both"}])
    with pytest.raises(AnnotationError, match="missing field"):
        ann.add_decisions([{"submission_id": "x"}])
    with pytest.raises(AnnotationError, match="'turn' must be an integer"):
        ann.add_decisions([{**unit_rows()[0], "turn": "1"}])
    assert ann.add_decisions([]) == 0
    assert ann.submissions()["decisions"].tolist() == [8]  # the refused batches stored nothing


@pytest.mark.usefixtures("studies_db")
def test_codes_need_admin_token_and_are_stored_hashed(tmp_path, monkeypatch):
    with pytest.raises(AccessDenied, match="Wrong admin token"):
        ann.issue_code("guess")
    with pytest.raises(AccessDenied, match="Wrong admin token"):
        ann.issue_code(None)
    issued = ann.issue_code(ADMIN, "annotator A")
    assert len(issued.code) >= 16
    with ann.connect_studies(read_only=True) as con:
        stored = con.frame("SELECT * FROM annotators")
    assert issued.code not in stored.to_string()  # only the hash is kept
    assert ann.annotator_for_code(issued.code) == issued.annotator_id
    assert ann.annotators()["name"].tolist() == ["annotator A"]
    monkeypatch.delenv("ETC_ADMIN_TOKEN")
    with pytest.raises(AccessDenied, match="ETC_ADMIN_TOKEN is not set"):
        ann.issue_code(ADMIN)


@pytest.mark.usefixtures("studies_db")
def test_writes_refused_without_valid_code():
    ann.add_decisions(unit_rows())
    ann.draw_sample(ADMIN, "sub-1", per_label=5)
    d = ann.next_decision(ann.issue_code(ADMIN).code)
    for code in (None, "", "   ", "not-a-code"):
        with pytest.raises(AccessDenied):
            ann.record_answer(code, d.decision_id, "Supported")
        with pytest.raises(AccessDenied):
            ann.next_decision(code)
    revoked = ann.issue_code(ADMIN, "gone")
    ann.revoke_code(ADMIN, revoked.annotator_id)
    with pytest.raises(AccessDenied, match="revoked"):
        ann.record_answer(revoked.code, d.decision_id, "Supported")
    with pytest.raises(AccessDenied):
        ann.draw_sample("wrong", "sub-1")
    assert ann.answers_frame().empty


@pytest.mark.usefixtures("studies_db")
def test_sample_is_stratified_and_seeded():
    rows = []
    for i in range(30):
        label = LABELS[0] if i < 20 else LABELS[1] if i < 27 else LABELS[2]
        rows.append(
            {
                "submission_id": "big",
                "dialogue_id": 5,
                "turn": 1 + i % 5,
                "role": "speaker",
                "side": "precision",
                "unit": f"u{i}",
                "target": "t",
                "label": label,
            }
        )
    ann.add_decisions(rows)
    sizes = ann.draw_sample(ADMIN, "big", per_label=4, seed=3)
    assert sizes == {"Supported": 4, "Neutral": 4, "Not Supported": 3}
    assert ann.draw_sample(ADMIN, "big", per_label=4, seed=3) == sizes  # nothing new added
    assert ann.draw_sample(ADMIN, "big", per_label=6, seed=3)["Supported"] == 6
    with pytest.raises(AnnotationError, match="No judge decisions"):
        ann.draw_sample(ADMIN, "unknown")


@pytest.mark.usefixtures("studies_db")
def test_flow_stores_answers_and_agreement_updates():
    ann.add_decisions(unit_rows())
    ann.draw_sample(ADMIN, "sub-1", per_label=10)
    a = ann.issue_code(ADMIN, "A").code
    b = ann.issue_code(ADMIN, "B").code
    assert ann.results().empty and math.isnan(ann.results().judge_human_kappa)

    # Annotator A agrees with the judge everywhere.
    seen = []
    while (d := ann.next_decision(a)) is not None:
        revealed = ann.record_answer(a, d.decision_id, d.label)
        assert revealed.label == d.label
        seen.append(d.decision_id)
    assert len(seen) == 8 and ann.progress(a) == (8, 8)
    first = ann.results(n_resamples=100)
    assert first.n_answers == 8 and first.n_annotators == 1
    assert first.judge_human_kappa == pytest.approx(1.0)
    assert math.isnan(first.human_human_kappa)  # one person only
    assert first.confusion.to_numpy().trace() == 8
    assert (first.metrics["change"] == 0).all()

    # Annotator B says Supported everywhere: agreement with the judge and with A falls, and
    # the submission's precision/recall rise where people outvote the judge (ties: less support).
    while (d := ann.next_decision(b)) is not None:
        ann.record_answer(b, d.decision_id, "Supported")
    second = ann.results(n_resamples=100)
    assert second.n_answers == 16 and second.n_annotators == 2 and second.n_double == 8
    judge = [r["label"] for r in unit_rows()]
    human = judge + ["Supported"] * 8
    # hand-worked Cohen kappa over (judge, answer) pairs: judge labels S,N,S,X,X,S,N,S twice
    p_o = (8 + judge.count("Supported")) / 16
    margins_j = {lab: 2 * judge.count(lab) / 16 for lab in LABELS}
    margins_h = {lab: human.count(lab) / 16 for lab in LABELS}
    p_e = sum(margins_j[lab] * margins_h[lab] for lab in LABELS)
    assert second.judge_human_kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert second.human_human_kappa < 1 and second.human_human_alpha < 1
    assert second.confusion.loc["Neutral", "Supported"] == 2
    assert second.confusion.loc["Not Supported", "Not Supported"] == 2

    # Ties (1 Supported vs 1 other) go to the less supportive answer: nothing changes.
    assert (second.metrics["change"] == 0).all()
    c = ann.issue_code(ADMIN, "C").code
    while (d := ann.next_decision(c)) is not None:
        ann.record_answer(c, d.decision_id, "Supported")
    third = ann.results(n_resamples=100).metrics.set_index("metric")
    # Judge: speaker item P = 1/2, R = 1/2; listener item P = 1/2, R = 1/2 -> all 50.
    # People (2 of 3 say Supported everywhere): every unit supported -> all 100.
    assert third.loc["precision", "judge"] == pytest.approx(50.0)
    assert third.loc["f1", "with_humans"] == pytest.approx(100.0)
    assert third.loc["recall", "change"] == pytest.approx(50.0)
    assert third.loc["precision", "relabelled"] == 4

    # Answering again replaces the earlier answer.
    d0 = seen[0]
    ann.record_answer(a, d0, "Neutral")
    assert len(ann.answers_frame()) == 24


@pytest.mark.usefixtures("studies_db")
def test_answers_must_be_valid_and_sampled():
    ann.add_decisions(unit_rows())
    code = ann.issue_code(ADMIN).code
    with pytest.raises(AnnotationError, match="not in the annotation sample"):
        ann.record_answer(code, "0" * 20, "Supported")
    with pytest.raises(AnnotationError, match="not one of"):
        ann.record_answer(code, "0" * 20, "Yes")
    assert ann.next_decision(code) is None  # nothing sampled yet


@pytest.mark.usefixtures("studies_db")
def test_export_csv():
    ann.add_decisions(unit_rows())
    ann.draw_sample(ADMIN, "sub-1", per_label=10)
    code = ann.issue_code(ADMIN).code
    d = ann.next_decision(code)
    ann.record_answer(code, d.decision_id, "Neutral")
    rows = list(csv.DictReader(io.StringIO(ann.export_csv())))
    assert len(rows) == 1
    assert rows[0]["human_label"] == "Neutral" and rows[0]["judge_label"] == d.label
    assert rows[0]["unit"] == d.unit and rows[0]["decision_id"] == d.decision_id
    assert ann.export_csv("other").count("\n") == 1  # header only


def test_a_wrong_server_password_is_named_without_the_password(postgres_server, monkeypatch):
    bad = postgres_server.url().replace(postgres_server.password, "wrong-password")
    monkeypatch.setenv("ETC_STUDIES_DB", bad)
    with pytest.raises(EtcError) as err:
        ann.submissions()
    assert "***" in str(err.value) and "wrong-password" not in str(err.value)
