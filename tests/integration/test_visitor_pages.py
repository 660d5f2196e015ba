"""What a visitor reads instead of operator text (issue #26): a refused file type said in the
page, doc links to the rendered document in the repository, chart labels that fit a phone."""

from __future__ import annotations

from tests.conftest import needs_corpus


@needs_corpus
def test_submit_page_says_a_txt_file_is_refused_in_the_page(corpus):
    from tests.site_apptest import app, assert_clean, predictions_file, send_button

    at = app("site_pages/submit.py")
    at.file_uploader(key="submit_file").upload("preds.txt", predictions_file(corpus)).run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert errors[0].startswith(r"preds\.txt was refused\: a \.txt file is not taken here\.")
    assert r"JSON Lines \(\.jsonl, \.json, \.ndjson\) or CSV \(\.csv\)" in errors[0]
    assert send_button(at).proto.disabled
