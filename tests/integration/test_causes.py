"""The cause layer: types, proxy, LLM labelling (fake server), the annotation flow, agreement."""

from __future__ import annotations

import json
import math
from collections import Counter

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from etclib.cli import main
from etclib.core.errors import AccessDenied, AnnotationError, JudgeError
from etclib.judge.cache import AnswerCache
from etclib.studies import annotation, causes
from tests.conftest import REAL_CORPUS, needs_corpus
from tests.fakes import FakeLLMServer
from tests.fakes.cause_responder import ScriptedCauses, cause_question
from tests.fixtures.studies import CAUSES_ADMIN as ADMIN
from tests.fixtures.studies import _causes_admin  # noqa: F401 - for every test here
from tests.studies_engines import studies_db  # noqa: F401 - fixture: DuckDB and PostgreSQL


def _raw_transcriptions():
    for f in sorted((REAL_CORPUS / "dialogues").glob("*.json")):
        for u in json.loads(f.read_text(encoding="utf-8"))["dialogue"]:
            yield u["role"], u["emotion_transcription"]


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_proxy_share_on_the_real_corpus_in_stats_json(tmp_path, capsys):
    # independently: plain substring tests (the corpus's one 相談相手 shares its transcription
    # with another 相手, and its one kana あいて is followed by a particle, so substrings count
    # the same transcriptions)
    rows = list(_raw_transcriptions())

    def refers(role, t):
        noun = "聞き手" if role == "speaker" else "話し手"
        return any(w in t for w in ("相手", "あいて", "あなた", "貴方", noun))

    flags = [refers(r, t) for r, t in rows]
    assert main(["stats", "--json", "--db", str(tmp_path / "s.duckdb")]) == 0
    got = json.loads(capsys.readouterr().out)["causes"]
    assert got["proxy"]["items"] == len(rows) == 9970
    assert got["proxy"]["inter_personal"] == sum(flags)
    assert got["proxy"]["share"] == pytest.approx(100 * sum(flags) / len(rows))
    speaker = [f for (r, _), f in zip(rows, flags, strict=True) if r == "speaker"]
    assert got["proxy"]["speaker"] == pytest.approx(100 * sum(speaker) / len(speaker))
    assert got["llm"] is None and got["human"] is None
    assert got["reccon"]["RECCON-DD"]["no-context"] == 43.0


def _test_items(corpus, n):
    return [(d, u) for d in corpus.split("test") for u in d.utterances][:n]


def _listener_partner(target: int) -> list[int]:
    """Scripted answers: a listener's cause is the speaker's line before; a speaker's, itself."""
    return [target - 1] if target % 2 == 0 else [target]


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_llm_run_is_stored_with_signature_and_cached(corpus, monkeypatch):
    script = ScriptedCauses(default=_listener_partner)
    with FakeLLMServer(script) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        run = causes.label_causes(corpus, "openai", "fake-model", limit=20, workers=4)
        first = server.count("openai", answered=True)
        assert run.n_labelled == 20 and run.n_failed == 0 and first == 20
        body = server.requests[0].body
        assert body["response_format"]["json_schema"]["name"] == "etc_causes"
        assert "causes" in body["response_format"]["json_schema"]["schema"]["properties"]
        again = causes.label_causes(corpus, "openai", "fake-model", limit=20, workers=4)
        assert server.count("openai") == first  # a second run makes no call
        assert again.n_cached == 20 and again.run_id == run.run_id
    cache = AnswerCache()
    assert cache.count("causes") == 20
    cache.close()
    runs = causes.list_runs()
    assert len(runs) == 1
    sig = runs.iloc[0]["signature"]
    prompt = causes.load_prompt()
    assert f"prompt:etc-causes-v{prompt.version}-{prompt.digest[:8]}" in sig
    assert "model:fake-model" in sig and "limit:20" in sig and "provider:openai" in sig
    stored = causes.run_causes(run.run_id)
    for _, u in _test_items(corpus, 20):
        assert stored[u.key] == tuple(_listener_partner(u.position))
    kinds = causes.cause_types_for_items([u for _, u in _test_items(corpus, 20)], "llm")
    expected = [
        "no-context" if u.role == "speaker" else "inter-personal"
        for _, u in _test_items(corpus, 20)
    ]
    assert kinds["cause_type"].tolist() == expected
    assert set(kinds["source"]) == {f"llm:{run.run_id}"}


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_llm_run_resumes_after_a_crash(corpus, monkeypatch):
    script = ScriptedCauses()
    answered = []

    def flaky(req):
        if len(answered) >= 7:
            raise FakeLLMServer.Fail(401)  # the run stops: a fatal error part-way
        answered.append(1)
        return script(req)

    with FakeLLMServer(flaky) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        with pytest.raises(JudgeError, match="HTTP 401"):
            causes.label_causes(corpus, "openai", "m", limit=15, workers=1, attempts=1)
        assert causes.list_runs().empty  # nothing stored from a stopped run
        server.responder = script
        server.reset()
        run = causes.label_causes(corpus, "openai", "m", limit=15, workers=1)
        assert server.count("openai") == 15 - 7  # the 7 answers before the crash were kept
    assert run.n_cached == 7 and run.n_labelled == 15


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_gemini_and_unusable_answers(corpus, monkeypatch):
    items = _test_items(corpus, 6)
    bad = items[3][1]  # a listener at position 4: the script names position 9
    script = ScriptedCauses(table={(bad.transcription.strip(), 4): [9]})
    with FakeLLMServer(script) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "k")
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", server.gemini_base_url)
        run = causes.label_causes(corpus, "gemini", "gemini-fake", limit=6, attempts=2, backoff=0)
        assert server.count("gemini", where=lambda r: cause_question(r.user)[0] == 4) == 2
    assert run.n_failed == 1 and run.n_labelled == 5 and "outside 1..4" in run.errors[0]
    assert bad.key not in causes.run_causes(run.run_id)


def _codes(n: int) -> list[str]:
    return [annotation.issue_code(ADMIN, f"person {i}").code for i in range(n)]


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_three_annotators_on_one_item(corpus):
    with pytest.raises(AccessDenied):
        causes.draw_sample("wrong", corpus, 1)
    assert causes.draw_sample(ADMIN, corpus, 1, seed=3) == 1
    (key,) = causes.sample_keys()
    a, b, c, d = _codes(4)
    target = causes.position(key[1], key[2])
    answers = {a: [target], b: [target], c: []}
    for code, given in answers.items():
        assert causes.next_item(code) == key
        stored = causes.record_causes(code, key, given)
        assert stored.positions == tuple(given)
        assert causes.next_item(code) is None  # never the same item twice
    assert causes.progress(a) == (1, 1)
    assert causes.next_item(d) is None  # the item has its three annotators
    with pytest.raises(AccessDenied):
        causes.record_causes("nope", key, [])
    other = next(u.key for u in corpus.split("test")[5].utterances if u.key != key)
    with pytest.raises(AnnotationError, match="not in the cause sample"):
        causes.record_causes(a, other, [])
    majority = causes.cause_utterances(*key, source="human")
    assert majority.positions == (target,) and majority.source == "human majority (3 answers)"
    assert causes.human_majority()[key] == (target,)


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_items_with_fewer_answers_come_first(corpus):
    causes.draw_sample(ADMIN, corpus, 3, seed=1)
    first, second, third = causes.sample_keys()
    a, b, c = _codes(3)
    assert causes.next_item(a) == first
    causes.record_causes(a, first, [])
    assert causes.next_item(b) == second  # no answers yet beats one answer
    causes.record_causes(b, second, [])
    assert causes.next_item(c) == third
    causes.record_causes(c, third, [])
    assert causes.next_item(c) == first  # all have one answer: drawing order
    causes.record_causes(a, second, [])
    assert causes.next_item(b) == first  # first has 1 answer, third 1; second has 2
    # drawing more keeps the earlier items and their order
    assert causes.draw_sample(ADMIN, corpus, 5, seed=1) == 5
    assert causes.sample_keys()[:3] == [first, second, third]


#: Per item (by index into the sample): three answers, and the LLM's answer (positions).
SCRIPT = [
    ([[1], [1], []], [1]),
    ([[2], [1], [1, 2]], [1]),
    ([[1, 3], [3], [1, 3]], [3]),
    ([[2, 4], [2], [3]], [3, 4]),
    ([[5], [4, 5], [5]], [5]),
    ([[1, 2, 3], [3], [1, 3]], [1, 2, 3]),
    ([[], [], [2]], []),
    ([[4], [4], [4]], [4]),
]


def _fleiss_by_hand(rows: list[list[str]], categories) -> float:
    n = len(rows[0])
    table = np.array([[row.count(c) for c in categories] for row in rows], dtype=float)
    p_i = ((table**2).sum(axis=1) - n) / (n * (n - 1))
    p_j = table.sum(axis=0) / table.sum()
    p_e = (p_j**2).sum()
    return (p_i.mean() - p_e) / (1 - p_e)


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_agreement_equals_independent_computation(corpus):
    # items whose target sits at a position that fits each scripted answer
    pool = [u for d in corpus.split("test") for u in d.utterances]
    chosen = []
    for answers, llm_answer in SCRIPT:
        need = max([p for a in answers for p in a] + llm_answer + [1])
        u = next(
            u for u in pool if u.position >= need and u not in chosen and u.position <= need + 1
        )
        chosen.append(u)
    from etclib.studies.annotation import connect_studies

    with connect_studies() as con:  # the admin's draw, with exactly these items
        con.schema("causes", causes._SCHEMA)
        for i, u in enumerate(chosen, start=1):
            con.execute("INSERT INTO cause_sample VALUES (?, ?, ?, 'test', ?, 0)", [*u.key, i])
    codes = _codes(4)
    # annotators rotate so that every item gets three different people, in different slots
    for i, (u, (answers, _)) in enumerate(zip(chosen, SCRIPT, strict=True)):
        for j, given in enumerate(answers):
            causes.record_causes(codes[(i + j) % 4], u.key, given)
    by_text = {
        (u.transcription.strip(), u.position): llm
        for u, (_, llm) in zip(chosen, SCRIPT, strict=True)
    }
    run = causes.label_causes(
        corpus, "openai", "scripted", split="sample", ask=ScriptedCauses(by_text)
    )
    got = causes.cause_agreement(corpus, run.run_id)
    assert got.n_answers == 24 and got.n_complete == 8 and got.n_annotators == 4

    # Krippendorff's alpha over (item, candidate) pairs, with the krippendorff package
    ids = sorted({a for a in causes.human_answers()["annotator_id"]})
    annot = {c: annotation.annotator_for_code(c) for c in codes}
    columns = []
    for i, (u, (answers, _)) in enumerate(zip(chosen, SCRIPT, strict=True)):
        who = {annot[codes[(i + j) % 4]]: set(a) for j, a in enumerate(answers)}
        for p in range(1, u.position + 1):
            columns.append([int(p in who[x]) if x in who else np.nan for x in ids])
    reliability = np.array(columns, dtype=float).T
    expected_alpha = krippendorff.alpha(
        reliability_data=reliability, level_of_measurement="nominal"
    )
    table = got.table.set_index("decision")
    assert table.loc["cause utterance", "humans"] == pytest.approx(expected_alpha)
    assert table.loc["cause utterance", "units"] == len(columns)

    # Fleiss' kappa over cause types, by hand
    types = [
        [causes.cause_type(u.key, a) for a in answers]
        for u, (answers, _) in zip(chosen, SCRIPT, strict=True)
    ]
    assert table.loc["cause type", "humans"] == pytest.approx(
        _fleiss_by_hand(types, causes.CAUSE_TYPES)
    )

    # the LLM against the human majority on pair decisions, with scikit-learn
    maj, llm, slot_votes = [], [], []
    for u, (answers, llm_answer) in zip(chosen, SCRIPT, strict=True):
        for p in range(1, u.position + 1):
            votes = [p in a for a in answers]
            slot_votes.append(votes)
            maj.append(sum(votes) >= 2)
            llm.append(p in llm_answer)
    assert table.loc["cause utterance", "llm_vs_majority"] == pytest.approx(
        cohen_kappa_score(llm, maj)
    )
    sv = np.array(slot_votes)
    yard = np.mean(
        [
            cohen_kappa_score(sv[:, i], sv[:, a] & sv[:, b])
            for i, a, b in ((0, 1, 2), (1, 0, 2), (2, 0, 1))
        ]
    )
    assert table.loc["cause utterance", "annotator_vs_others"] == pytest.approx(yard)

    # RECCON's measures of the pair decisions, with scikit-learn, beside alpha and kappa
    f1 = got.pair_f1.set_index("who")
    assert list(f1.index) == ["LLM", "answer 1", "answer 2", "answer 3"]
    for who, pred in [("LLM", llm)] + [(f"answer {i + 1}", sv[:, i]) for i in range(3)]:
        assert f1.loc[who, "pairs"] == len(maj) and f1.loc[who, "positives"] == sum(maj)
        assert f1.loc[who, "f1_positive"] == pytest.approx(100 * f1_score(maj, pred), abs=1e-9)
        assert f1.loc[who, "f1_negative"] == pytest.approx(
            100 * f1_score(maj, pred, pos_label=False), abs=1e-9
        )
        assert f1.loc[who, "macro_f1"] == pytest.approx(
            100 * f1_score(maj, pred, average="macro"), abs=1e-9
        )

    # the LLM's type against the majority type (items where two or more people agree)
    maj_type, llm_type = [], []
    for u, row, (_, llm_answer) in zip(chosen, types, SCRIPT, strict=True):
        top, n = Counter(row).most_common(1)[0]
        if n >= 2:
            maj_type.append(top)
            llm_type.append(causes.cause_type(u.key, llm_answer))
    assert table.loc["cause type", "llm_vs_majority"] == pytest.approx(
        cohen_kappa_score(llm_type, maj_type, labels=list(causes.CAUSE_TYPES))
    )
    assert int(got.type_confusion.to_numpy().sum()) == len(maj_type)

    # the proxy against "partner involved" by majority
    partner = [sum(t in ("inter-personal", "hybrid") for t in row) >= 2 for row in types]
    proxy = [causes.partner_reference(u.transcription, u.role) for u in chosen]
    expected_proxy = cohen_kappa_score(proxy, partner)
    value = table.loc["partner involved", "proxy_vs_majority"]
    assert (math.isnan(value) and math.isnan(expected_proxy)) or value == pytest.approx(
        expected_proxy
    )

    # the source used per item: human majority first, then the LLM, then the proxy
    extra = next(u for u in pool if u not in chosen)
    frame = causes.cause_types_for_items([chosen[0], extra])
    assert frame["source"].tolist() == ["human", "proxy"]
    assert frame["cause_type"].tolist()[0] == causes.cause_type(chosen[0].key, [1])

    # export: anonymised annotators, the licence, every label
    records = causes.export_records()
    assert records[0]["record"] == "header" and "CC BY-NC 4.0" in records[0]["licence"]
    labels = records[1:]
    assert len(labels) == 24 + 8
    humans = {r["labeller"] for r in labels if r["source"] == "human"}
    assert humans == {f"annotator-{i}" for i in range(1, 5)}
    text = json.dumps(records, ensure_ascii=False)
    for c in codes:
        assert c not in text and annot[c] not in text
    assert all(r["signature"] == run.signature for r in labels if r["source"] == "llm")
    assert causes.RECCON_COMMIT.startswith("579ea8a")


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_reccon_export_of_an_llm_run_round_trips(corpus, tmp_path):
    script = ScriptedCauses(default=lambda target: [] if target % 3 == 0 else sorted({1, target}))
    run = causes.label_causes(corpus, "openai", "scripted", limit=30, ask=script)
    got = causes.export_reccon(tmp_path / "llm.json", corpus, source="llm", db=None)
    sets = causes.run_causes(run.run_id)
    assert got["labelled"] == len(sets) == 30 and got["dialogues"] == 3
    assert any(v == () for v in sets.values())  # latent causes are in the file as "b"
    _check_round_trip(_read_reccon(tmp_path / "llm.json"), sets, corpus)


def _read_reccon(path):
    """Read a file in RECCON's layout by the rules of RECCON's loaders (declare-lab/RECCON,
    commit 579ea8a; the Causal Emotion Entailment readers of its data/original_annotation
    files): a dialogue id maps to a list whose first element is the list of utterances; turn
    numbers start at 1; an utterance with "expanded emotion cause evidence" is a target whose
    evidence entries are cause turns, "b" meaning a latent cause (no utterance); the pairs of a
    target are every utterance up to and including it, positive when in its evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    dialogues = {}
    for dialogue_id, wrapped in data.items():
        conv = wrapped[0]
        targets = {}
        for i, utt in enumerate(conv):
            assert utt["turn"] == i + 1  # indices from 1, in order
            if "expanded emotion cause evidence" not in utt:
                continue
            evidence = utt["expanded emotion cause evidence"]
            spans = utt["expanded emotion cause span"]
            assert len(spans) == len(evidence)
            turns = [e for e in evidence if e != "b"]
            latent = "b" in evidence
            pairs = [(utt["turn"], c, c in turns) for c in range(1, utt["turn"] + 1)]
            targets[utt["turn"]] = {
                "causes": tuple(turns),
                "latent": latent,
                "spans": [s for s in spans if s != "b"],
                "type": utt["type"],
                "pairs": pairs,
            }
        dialogues[int(dialogue_id)] = {"utterances": conv, "targets": targets}
    return dialogues


def _check_round_trip(read, sets, corpus):
    """Every cause set of ``sets`` read back from the RECCON layout, nothing else."""
    found = {}
    for d, got in read.items():
        dialogue = corpus.by_id[d]
        by_pos = {u.position: u for u in dialogue.utterances}
        assert [u["utterance"] for u in got["utterances"]] == [by_pos[p].text for p in range(1, 11)]
        assert [u["speaker"] for u in got["utterances"]] == ["A", "B"] * 5
        for turn, t in got["targets"].items():
            u = by_pos[turn]
            found[u.key] = t["causes"]
            assert t["latent"] == (not t["causes"])
            assert t["spans"] == [by_pos[c].text for c in t["causes"]]
            assert tuple(t["type"]) == causes.reccon_labels(u.key, t["causes"])
            assert [c for _, c, yes in t["pairs"] if yes] == list(t["causes"])
    assert found == sets


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_reccon_export_round_trips(corpus, tmp_path, capsys):
    pool = [u for d in corpus.split("test")[:3] for u in d.utterances]
    keys = [pool[1].key, pool[4].key, pool[9].key, pool[12].key]  # two dialogues
    from etclib.studies.annotation import connect_studies

    with connect_studies() as con:
        con.schema("causes", causes._SCHEMA)
        for i, k in enumerate(keys, start=1):
            con.execute("INSERT INTO cause_sample VALUES (?, ?, ?, 'test', ?, 0)", [*k, i])
    answers = [  # three people per item; a latent majority on the third item
        [[1, 2], [2], [1, 2]],
        [[3, 5], [5], [4]],
        [[], [], [9]],
        [[3], [3], [1, 3]],
    ]
    codes = _codes(3)
    for k, given in zip(keys, answers, strict=True):
        for code, a in zip(codes, given, strict=True):
            causes.record_causes(code, k, a)
    majority = causes.human_majority()
    assert majority[keys[2]] == () and majority[keys[0]] == (1, 2)
    out = tmp_path / "reccon.json"
    assert main(["causes", "export", "--format", "reccon", "--out", str(out)]) == 0
    assert "4 labelled utterances of 2 dialogues" in capsys.readouterr().out
    assert "CC BY-NC 4.0" in (tmp_path / "reccon.json.LICENSE.txt").read_text(encoding="utf-8")
    raw = json.loads(out.read_text(encoding="utf-8"))
    latent = raw[str(keys[2][0])][0][causes.position(keys[2][1], keys[2][2]) - 1]
    assert latent["expanded emotion cause evidence"] == ["b"] and latent["type"] == ["latent"]
    assert latent["expanded emotion cause span"] == ["b"]
    _check_round_trip(_read_reccon(out), majority, corpus)
    # the emotion in RECCON's names; the ETC extras beside it
    first = raw[str(keys[0][0])][0][0]
    assert set(first) >= {"turn", "speaker", "utterance", "emotion", "emotion transcription"}
    assert first["emotion"] in causes.RECCON_EMOTION.values()
    assert main(["causes", "export", "--format", "reccon", "--source", "llm", "--out", str(out)])
    assert "No LLM cause run" in capsys.readouterr().err


@pytest.mark.usefixtures("studies_db")
def test_agreement_without_answers_is_empty():
    got = causes.cause_agreement()
    assert got.empty and got.table.empty


@pytest.mark.usefixtures("studies_db")
@needs_corpus
def test_cli_label_and_export(corpus, monkeypatch, capsys, tmp_path):
    with FakeLLMServer(ScriptedCauses(default=_listener_partner)) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        argv = ["causes", "--provider", "openai", "--model", "fake-model", "--limit", "10"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "10 of 10 items labelled" in out and "RECCON-DD" in out
        assert main([*argv, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["cached"] == 10 and server.count("openai") == 10
    shares = report["distribution"]["types"]
    assert shares["no-context"] == pytest.approx(50) and shares["inter-personal"] == pytest.approx(
        50
    )
    assert main(["stats", "--json", "--db", str(tmp_path / "s.duckdb")]) == 0
    assert json.loads(capsys.readouterr().out)["causes"]["llm"]["items"] == 10
    out_file = tmp_path / "layer.jsonl"
    assert main(["causes", "export", "--out", str(out_file)]) == 0
    lines = [json.loads(x) for x in out_file.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["record"] == "header" and len(lines) == 11
    assert main(["causes", "export"]) == 2  # --out is needed
