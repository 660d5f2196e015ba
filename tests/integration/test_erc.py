"""The ERC (emotion categories) track: file format, metrics against scikit-learn, the human
ceiling, the CPU baselines, the LLM classifier against the fake server, the category metric,
and the leaderboard keyed by track."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    hamming_loss,
)

from etclib import tracks
from etclib.core.errors import PredictionsError
from etclib.data.corpus import CATEGORIES
from etclib.data.task import chat_item
from etclib.data.task import items as split_items
from etclib.tracks.categories import metric as erc
from etclib.tracks.categories.labels import indicator
from etclib.tracks.predictions import detect_track, dumps_csv, dumps_jsonl, read_predictions
from etclib.tracks.scoring import score
from tests.conftest import needs_corpus
from tests.fakes import FakeLLMServer
from tests.fixtures.erc import NON_NEUTRAL, _sklearn


def _file(corpus, split="valid", value=lambda it: ["joy"], skip=(), extra=()):
    lines = [
        json.dumps(
            {"dialogue_id": it.dialogue_id, "turn": it.turn, "role": it.role, "labels": value(it)},
            ensure_ascii=False,
        )
        for i, it in enumerate(split_items(corpus, split))
        if i not in skip
    ]
    return ("\n".join([*lines, *extra]) + "\n").encode()


@needs_corpus
@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["joyy"], "unknown category 'joyy'. Did you mean 'joy'?"),
        (["喜び", "joy"], "the category 'joy' is named twice"),
        (["neutral", "anger"], "'neutral' is combined with other categories"),
        ([], "the label list is empty"),
        ("joy", "'labels' must be a list of category names"),
        ([1], "labels must be category names (strings), found int"),
    ],
)
def test_label_refusals_name_the_line(corpus, labels, message):
    data = _file(
        corpus, value=lambda it: labels if (it.turn, it.role) == (1, "listener") else ["joy"]
    )
    with pytest.raises(PredictionsError) as exc:
        read_predictions(data, split="valid", corpus=corpus, track="erc")
    first = exc.value.problems[0]
    assert first.line == 2 and message in first.message  # the first listener line


@needs_corpus
def test_missing_and_repeated_items_are_refused_with_lines(corpus):
    items = split_items(corpus, "valid")
    it = items[0]
    again = json.dumps({"dialogue_id": it.dialogue_id, "turn": 1, "role": "speaker", "labels": []})
    again = again.replace("[]", '["joy"]')
    data = _file(corpus, skip={3}, extra=[again])
    with pytest.raises(PredictionsError) as exc:
        read_predictions(data, split="valid", corpus=corpus, track="erc")
    text = "\n".join(f"{p.line}: {p.message}" for p in exc.value.problems)
    assert (
        f"{len(items)}: item (dialogue_id={it.dialogue_id}, turn=1, role=speaker) repeats line 1"
        in text
    )
    assert "1 of the 990 items of the valid split have no prediction" in text


@needs_corpus
def test_a_transcription_file_on_the_erc_track_says_which_track(corpus):
    rows = [(it.key, "嬉しい") for it in split_items(corpus, "valid")]
    data = dumps_jsonl(rows).encode()
    assert detect_track(data, "x.jsonl") == "transcription"
    with pytest.raises(PredictionsError) as exc:
        read_predictions(data, split="valid", corpus=corpus, track="erc")
    assert "was it made for --track transcription?" in exc.value.problems[0].message


@needs_corpus
def test_csv_and_japanese_names_read_as_the_same_label_sets(corpus):
    items = split_items(corpus, "valid")
    sets = [it.label for it in items]
    jsonl = dumps_jsonl([(it.key, s) for it, s in zip(items, sets)], "erc").encode()
    csv = dumps_csv([(it.key, s) for it, s in zip(items, sets)], "erc").encode()
    ja = jsonl.decode().replace('"joy"', '"喜び"').replace('"surprise"', '"驚き"').encode()
    assert detect_track(csv, "x.csv") == detect_track(jsonl, "x.jsonl") == "erc"
    got = [
        read_predictions(d, "valid", corpus, n, track="erc")
        for d, n in ((jsonl, "a.jsonl"), (csv, "a.csv"), (ja, "b.jsonl"))
    ]
    assert got[0].by_key == got[1].by_key == got[2].by_key == {it.key: it.label for it in items}


@needs_corpus
@pytest.mark.usefixtures("warmed")
@pytest.mark.parametrize("backend", ["majority", "prior", "tfidf", "retrieval-labels"])
def test_every_metric_equals_scikit_learn_on_the_real_test_split(corpus, backend):

    items = split_items(corpus, "test")
    pred = tracks.get("erc").backend(backend, corpus=corpus).predict(items)
    result = score({it.key: p for it, p in zip(items, pred)}, "test", corpus=corpus, track="erc")
    want = _sklearn(pred, [it.label for it in items])
    for k in want:
        assert result.scores[k] == pytest.approx(want[k], abs=1e-9), (backend, k)
    # the statistics the bootstrap sums give the same numbers
    again = erc.METRIC.from_statistics(
        erc.METRIC.statistics(result.data["erc"]).sum(axis=0), everything=True
    )
    for k in want:
        assert again[k][0] == pytest.approx(want[k], abs=1e-9)
    ci = result.intervals(resamples=200)
    assert set(ci) == {f.key for f in erc.METRIC.FACTS if f.ranking}
    assert ci["macro_f1"][0] <= result.scores["macro_f1"] <= ci["macro_f1"][1]
    assert result.signature["track"].startswith("erc|labels:")


@needs_corpus
@pytest.mark.usefixtures("warmed")
@pytest.mark.parametrize("backend", ["majority", "tfidf"])
def test_breakdown_subsets_leave_absent_categories_out(corpus, backend):
    """Each role / category / turn subset's macro-F1 is scikit-learn's with zero_division=nan
    (an absent category left out); a subset missing a category shows it n/a."""

    items = split_items(corpus, "test")
    pred = tracks.get("erc").backend(backend, corpus=corpus).predict(items)
    result = score({it.key: p for it, p in zip(items, pred)}, "test", corpus=corpus, track="erc")
    g, p = indicator([it.label for it in items]), indicator(pred)
    seen_absent = 0
    for group, subsets in result.groups().items():
        table = result.breakdown()[group]
        for name, idx in subsets.items():
            gs, ps = g[idx], p[idx]
            got = table[name]
            want = f1_score(gs, ps, average="macro", zero_division=np.nan) * 100
            assert got["macro_f1"] == pytest.approx(want, abs=1e-9), (group, name)
            assert got["weighted_f1"] == pytest.approx(
                f1_score(gs, ps, average="weighted", zero_division=0) * 100, abs=1e-9
            )
            for j, c in enumerate(CATEGORIES):
                if not gs[:, j].any() and not ps[:, j].any():
                    assert np.isnan(got[f"f1_{c}"]), (group, name, c)
                    seen_absent += 1
    assert seen_absent  # e.g. the items labelled neutral have no joy, and majority predicts none


@needs_corpus
def test_score_cli_prints_the_field_measures_on_a_hand_made_file(corpus, tmp_path, capsys):
    from etclib.cli import main

    rng = np.random.default_rng(7)
    items = split_items(corpus, "test")
    sets = []
    for _ in items:
        chosen = tuple(c for c in CATEGORIES[:-1] if rng.random() < 0.2)
        sets.append(chosen or ("neutral",))
    path = tmp_path / "labels.jsonl"
    path.write_text(dumps_jsonl([(it.key, s) for it, s in zip(items, sets)], "erc"), "utf-8")
    assert main(["score", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    want = _sklearn(sets, [it.label for it in items])
    for k in ("macro_f1", "weighted_f1", "micro_f1_no_neutral", "micro_f1"):
        assert out[k] == pytest.approx(want[k], abs=1e-9), k
    assert {"weighted_f1", "micro_f1_no_neutral"} <= set(out["breakdown"]["role"]["speaker"])
    assert out["loo_macro_f1"] is not None
    assert main(["score", str(path)]) == 0
    text = capsys.readouterr().out
    assert "weighted_f1" in text and "micro_f1_no_neutral" in text and "loo_macro_f1" in text


@needs_corpus
@pytest.mark.usefixtures("warmed")
def test_like_for_like_scores_each_entry_on_the_persons_references(corpus):
    """``loo_*``: the entry against each annotator-left-out pair's consensus, averaged over the
    three; the consensus rebuilt here from the raw annotations."""
    from etclib.tracks.categories.analysis import human_ceiling

    items = split_items(corpus, "test")
    pred = tracks.get("erc").backend("tfidf", corpus=corpus).predict(items)
    result = score({it.key: p for it, p in zip(items, pred)}, "test", corpus=corpus, track="erc")
    refs = [[], [], []]
    for it in items:
        u = next(u for u in corpus.by_id[it.dialogue_id].utterances if u.key == it.key)
        for i in range(3):
            a, b = (u.annotations[j] for j in range(3) if j != i)
            both = tuple(c for c in CATEGORIES[:-1] if c in a and c in b)
            refs[i].append(both or ("neutral",))
    p = indicator(pred)
    for key, fn in (
        ("macro_f1", lambda g: f1_score(g, p, average="macro", zero_division=np.nan)),
        ("weighted_f1", lambda g: f1_score(g, p, average="weighted", zero_division=0)),
        ("micro_f1", lambda g: f1_score(g, p, average="micro", zero_division=0)),
        ("exact_match", lambda g: accuracy_score(g, p)),
        ("hamming", lambda g: 1 - hamming_loss(g, p)),
        (
            "micro_f1_no_neutral",
            lambda g: f1_score(g, p, average="micro", labels=NON_NEUTRAL, zero_division=0),
        ),
    ):
        want = np.mean([fn(indicator(r)) for r in refs]) * 100
        assert result.scores[f"loo_{key}"] == pytest.approx(want, abs=1e-9), key
    person = human_ceiling(corpus, "test").set_index("annotator").loc["a person"]
    for key in ("macro_f1", "weighted_f1", "micro_f1_no_neutral"):
        assert person[f"loo_{key}"] == pytest.approx(person[key], abs=1e-12)
    assert "erc_loo" in result.signature


@needs_corpus
@pytest.mark.usefixtures("warmed")
def test_tfidf_beats_majority_and_prior_on_test(corpus, tmp_path, capsys):
    from etclib.cli import main

    f1 = {}
    for backend in ("majority", "prior", "tfidf"):
        out = tmp_path / f"{backend}.jsonl"
        args = ["predict", "--track", "erc", "--backend", backend, "--split", "test"]
        assert main([*args, "--out", str(out)]) == 0
        assert main(["validate", str(out)]) == 0  # the track is detected from the fields
        assert "(erc track)" in capsys.readouterr().out
        assert main(["score", str(out), "--json"]) == 0
        f1[backend] = json.loads(capsys.readouterr().out)["macro_f1"]
    assert f1["tfidf"] > max(f1["majority"], f1["prior"])


@needs_corpus
def test_human_ceiling_is_each_annotator_against_the_other_twos_majority(corpus):
    from etclib.tracks.categories.analysis import annotator_sets, human_ceiling

    table = human_ceiling(corpus, "test")
    assert list(table["annotator"]) == ["1", "2", "3", "a person"]
    own, others = annotator_sets(corpus, "test")[0]
    # independent: the consensus rebuilt from the raw annotations of annotators 2 and 3
    items = split_items(corpus, "test")
    for it, theirs in zip(items[:50], others[:50]):
        u = next(u for u in corpus.by_id[it.dialogue_id].utterances if u.key == it.key)
        both = [c for c in CATEGORIES[:-1] if c in u.annotations[1] and c in u.annotations[2]]
        assert theirs == (tuple(both) or ("neutral",))
    want = f1_score(indicator(others), indicator(own), average="macro", zero_division=0) * 100
    assert table.loc[0, "macro_f1"] == pytest.approx(want, abs=1e-9)
    assert table.loc[3, "macro_f1"] == pytest.approx(table.loc[:2, "macro_f1"].mean(), abs=1e-9)


@needs_corpus
def test_classifier_saved_with_version_and_hash_and_reloaded(corpus):
    from etclib.tracks.categories import classifier

    model = classifier.cached(corpus, "transcription")
    assert f"v{classifier.VERSION}" in model.signature and model.data_hash[:12] in model.signature
    assert 40 < model.valid["macro_f1"] <= 100
    classifier._MEMORY.clear()
    again = classifier.cached(corpus, "transcription")  # from the disk cache
    texts = [it.reference for it in split_items(corpus, "valid")[:40]]
    assert again.predict_texts(texts) == model.predict_texts(texts)
    # the saved vocabulary and IDF reproduce scikit-learn's own TfidfVectorizer rows
    from sklearn.feature_extraction.text import TfidfVectorizer

    from etclib.data.tokenize import TokenCache

    feats = classifier.text_features(texts, TokenCache())
    vec = TfidfVectorizer(
        tokenizer=str.split,
        token_pattern=None,
        lowercase=False,
        ngram_range=(1, 2),
        sublinear_tf=True,
        vocabulary=model.vocabulary,
    )
    vec.idf_ = model.idf
    assert np.allclose(vec.transform(feats).toarray(), again.matrix(feats).toarray(), atol=1e-12)


@needs_corpus
@pytest.mark.usefixtures("warmed")
def test_category_metric_tells_constant_from_copy(corpus, capsys, tmp_path):
    from etclib.cli import main

    items = split_items(corpus, "test")
    files = {
        "constant": [(it.key, "嬉しい") for it in items],
        "reference": [(it.key, it.reference) for it in items],
    }
    got = {}
    for name, rows in files.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(dumps_jsonl(rows), encoding="utf-8")
        assert main(["score", str(path), "--metrics", "category", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        got[name] = out["category_f1"]
        assert out["signature"]["category"].startswith("tfidf-ovr-logreg-v")
        assert out["category_classifier_valid_f1"] > 0
    assert got["constant"] < 15 < 40 < got["reference"]


@needs_corpus
@pytest.mark.usefixtures("warmed")
def test_library_functions_for_the_chat_and_corpus_pages(corpus):
    from etclib.tracks.categories.analysis import chat_categories, classifier_confusion

    labels = chat_categories([("A", "試験に落ちてしまって、本当に悲しいです。")], corpus=corpus)
    assert labels and set(labels) <= set(CATEGORIES)
    confusion = classifier_confusion(corpus, "test")
    assert list(confusion.index) == list(confusion.columns) == list(CATEGORIES)
    # every aggregated category of an item meets every category the classifier reads
    assert confusion.loc["neutral"].sum() >= sum(
        1 for it in split_items(corpus, "test") if it.label == ("neutral",)
    )


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_llm_backend_against_the_fake_server(monkeypatch, provider):

    def answer(req):
        return (
            '```json\n{"labels": ["驚き", "喜び"]}\n```'
            if "受かり" in req.user
            else '{"labels": []}'
        )

    with FakeLLMServer(answer, api_key="k") as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        monkeypatch.setenv("GEMINI_API_KEY", "k")
        monkeypatch.setenv("ETC_GEMINI_BASE_URL", fake.gemini_base_url)
        backend = tracks.get("erc").backend("llm", provider=provider, model="fake-model")
        items = [chat_item([("A", "試験に受かりました！")]), chat_item([("A", "こんにちは")])]
        assert backend.predict(items) == [("joy", "surprise"), ("neutral",)]
        sent = fake.requests[-1]
        assert "参加者A" in sent.user and "該当なし" in sent.user
        assert backend.signature()["prompt"].startswith("etc-erc-classify-v1-")


def test_llm_backend_refuses_an_unusable_answer(monkeypatch):
    from etclib.core.errors import BackendError

    with FakeLLMServer(lambda req: '{"labels": ["happy"]}', api_key="k") as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_base_url)
        backend = tracks.get("erc").backend("llm", model="fake-model", retries=0)
        with pytest.raises(BackendError, match="unknown category 'happy'"):
            backend.predict([chat_item([("A", "やった")])])


@needs_corpus
def test_erc_submission_is_scored_on_the_categories_board_only(corpus):
    import leaderboard as lb

    items = split_items(corpus, "test")
    data = dumps_jsonl([(it.key, it.label) for it in items], "erc").encode()
    receipt = lb.submit(data, {"name": "oracle labels"}, file_name="erc.jsonl")
    lb.process_jobs()
    status = lb.status(receipt.id)
    assert status["status"] == "scored" and status["track"] == "erc"
    board = lb.ranking(track="erc")
    row = board.set_index("id").loc[receipt.id]
    assert row["macro_f1"] == pytest.approx(100.0) and row["rank_band"] == "1"
    assert row["weighted_f1"] == pytest.approx(100.0)
    assert row["micro_f1_no_neutral"] == pytest.approx(100.0)
    assert {"weighted_f1", "micro_f1_no_neutral"} <= set(lb.metric_columns("erc"))
    assert 0 < row["loo_macro_f1"] < 100  # the 2-of-3 label is not each pair's consensus
    from views.board import like_for_like_table

    like = like_for_like_table(board, "erc").set_index("name")
    assert list(like.index) == ["a person", "oracle labels"]
    assert like.loc["oracle labels", "Macro-F1 ↑"] == pytest.approx(row["loo_macro_f1"], abs=0.01)
    assert receipt.id not in set(lb.ranking()["id"])  # not on the transcription board
    assert "a person" in set(lb.reference_rows("erc")["name"])
    again = dumps_csv([(it.key, it.label) for it in items], "erc").encode()
    assert lb.submit(again, {"name": "same"}, file_name="erc.csv").duplicate
