"""About: data and model licences, how scores are computed, how to cite."""

import streamlit as st

from views.about import board_state, metric_signatures, metric_table, ranking_rule
from views.errors import shown_errors

CITATION = """\
@inproceedings{tanaka-etal-2026-etcdataset,
  title = "Emotion Transcription in Conversation: A Benchmark for Capturing Subtle and Complex Emotional States through Natural Language",
  author = "Tanaka, Yoshiki and Uehara, Ryuichi and Inoue, Koji and Inaba, Michimasa",
  booktitle = "Proceedings of the Fifteenth Language Resources and Evaluation Conference (LREC 2026)",
  year = "2026",
  pages = "9692--9709",
  publisher = "European Language Resources Association (ELRA)"
}

@inproceedings{tanaka-etal-2026-etcdataset-ja,
  title = "対話における心情記述: 自然言語による機微かつ複雑な心情理解のためのベンチマーク",
  author = "田中 義規 and 上原 隆一 and 井上 昂治 and 稲葉 通将",
  booktitle = "言語処理学会第32回年次大会発表論文集",
  year = "2026",
  pages = "1328--1333"
}"""


@st.cache_data(show_spinner=False)
def _signatures() -> dict[str, str]:
    return metric_signatures()


st.title("About the ETC benchmark")

st.header("The data")
st.markdown(
    """
The **ETC dataset** (Emotion Transcription in Conversation) was built by Yoshiki Tanaka,
Ryuichi Uehara, Koji Inoue and Michimasa Inaba (UEC Inaba Lab and Kyoto University) and is
published at [github.com/UEC-InabaLab/ETCDataset](https://github.com/UEC-InabaLab/ETCDataset)
under the **Creative Commons Attribution-NonCommercial 4.0 International licence**
([CC BY-NC 4.0](https://creativecommons.org/licenses/by-nc/4.0/)). This site shows it unchanged
(pinned commit `6c4f7e10`), for non-commercial research; the dialogues were collected by
crowdsourcing and do not represent the views of the dataset's creators. Five dialogues were
withdrawn from the public release after quality checks, so statistics here may differ slightly
from the paper's.

Please follow the dataset's **guidelines for use**:

- do not attempt to identify individuals from the data;
- do not use the data to impersonate any specific speaker;
- when predicting speakers' personality traits, be mindful of the rights of speakers who may not
  wish to have their personal information inferred.
"""
)

st.header("The models")
st.markdown(
    """
| model | used for | licence / terms |
|---|---|---|
| Retrieval baseline | default chat model, leaderboard baseline | this project's code (Apache-2.0); answers are corpus transcriptions (CC BY-NC 4.0) |
| [Llama-3.1-Swallow-8B-Instruct-v0.3](https://huggingface.co/tokyotech-llm/Llama-3.1-Swallow-8B-Instruct-v0.3) and its QLoRA fine-tune | paper baseline, fine-tuned chat model | Llama 3.1 Community License and Gemma Terms of Use (see the model card); "Built with Llama". The fine-tuned adapter is trained on CC BY-NC 4.0 data and shared for non-commercial research only |
| GPT-4.1 (OpenAI API) | paper baseline, chat model | OpenAI's terms of use and usage policies |
| Gemini (Google) | chat model, LLM judge | the Gemini API terms of service |
| bert-base-multilingual-cased | BERTScore | Apache-2.0 |
| MeCab with the IPA dictionary | tokenisation for BLEU and ROUGE | MeCab: BSD/LGPL/GPL; IPADIC: its own permissive licence |
"""
)

st.header("How scores are computed")
st.markdown(
    """
Every test item is one utterance of the 101 test dialogues (1,010 items); a prediction is
compared with the transcription that the utterance's author wrote. The metrics, as each
metric's code declares them (×100 scores are shares or scores from 0 to 100):
"""
)
st.dataframe(metric_table(), hide_index=True, width="stretch", key="about_metrics")
st.markdown(
    f"""
The LLM judge splits prediction and reference into atomic units of inner state (emotions,
intentions) and checks each unit against the other text (Supported / Neutral / Not Supported;
only Supported counts); items whose reference has no unit are left out.

**Intervals and ranks**: each ranking metric carries a 95% paired bootstrap interval over items
(the same seeded resamples for every entry); entries that are not significantly different
share a rank band. {ranking_rule()}

A score is only comparable with scores of the same **signature**: the tokenizer and its
dictionary, the metric implementation and its settings, the BERTScore model and layer, the judge
model, its decoding settings and a hash of its prompts, the prompt template of prompted
baselines, and the etclib version. The leaderboard never mixes signatures in one column.
"""
)
st.subheader("The board right now")
with shown_errors():  # the rest of About does not need the board
    st.markdown(board_state())
st.markdown("The signatures on this server:")
st.dataframe(
    [{"part": k, "signature": v} for k, v in _signatures().items()],
    hide_index=True,
    width="stretch",
    key="about_signatures",
)
st.caption(
    "BLEU: sacrebleu's signature with tok set to the tokenizer above and order 1-4. BERTScore: "
    "model, layer and library versions, shown with each score on the leaderboard."
)

st.header("How to cite")
st.markdown("If you use the ETC dataset or this benchmark, please cite the dataset's papers:")
st.code(CITATION, language="bibtex")
st.markdown(
    "The benchmark code (etclib, the leaderboard and this site) is released under Apache-2.0. "
    "The corpus is never redistributed with it: it is loaded from the dataset's own repository."
)
