"""Home: what the ETC task is, shown with a real corpus dialogue, and the corpus at a glance."""

import streamlit as st

from etclib.errors import EtcError
from etclib.site import corpus_stats, example_dialogue

st.title("Emotion Transcription in Conversation")
st.markdown(
    "Given a Japanese dialogue up to an utterance, a system writes, in natural language, what the "
    "speaker felt or intended at that moment, **as the speaker themselves described it**. "
    "The ETC corpus has 997 dialogues in which every participant wrote such an *emotion "
    "transcription* for each of their utterances."
)


@st.cache_data(show_spinner=False)
def _stats():
    return corpus_stats()


@st.cache_data(show_spinner=False)
def _example():
    d = example_dialogue()
    return None if d is None else {**d, "utterances": d["utterances"].to_dict("records")}


try:
    stats = _stats()
    example = _example()
except EtcError as exc:
    st.error(str(exc))
    st.stop()

cols = st.columns(4)
cols[0].metric("Dialogues", f"{stats['dialogues']:,}")
cols[1].metric("Participants", f"{stats['participants']:,}")
cols[2].metric("Utterances", f"{stats['utterances']:,}")
cols[3].metric("Annotator agreement (Fleiss κ)", f"{stats['kappa_overall']:.2f}")

if example:
    st.subheader(f"An example from the test split: dialogue {example['dialogue_id']}")
    st.caption(f"Dialogue emotion given to the pair: {example['dialogue_emotion']}")
    for u in example["utterances"]:
        letter = "A" if u["role"] == "speaker" else "B"
        with st.chat_message(
            "user" if letter == "A" else "assistant", avatar="🅰️" if letter == "A" else "🅱️"
        ):
            st.text(f"{letter}: {u['utterance']}")
            st.caption(
                f"Emotion transcription: {u['transcription']}  ·  label: {', '.join(u['label'])}"
            )
