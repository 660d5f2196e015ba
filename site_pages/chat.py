"""Chat: write a dialogue as A and B, or replay a corpus dialogue, and see each utterance's
predicted emotion transcription and its predicted emotion categories (the ERC baseline)."""

import streamlit as st

from etclib.core.errors import EtcError
from views import cause_layer, chat
from views.dialogue import utterance_message
from views.errors import show_error, shown_errors
from views.identity import limit_key
from views.text import escape_markdown

st.title("Chat with an emotion transcriber")
st.caption(
    "A is the speaker role (opens the dialogue), B the listener. After each utterance the chosen "
    "model writes what its author probably felt or intended, in Japanese, in the first person. "
    f"Limits: {chat.MAX_UTTERANCE_CHARS} characters per utterance, {chat.MAX_LINES} utterances "
    f"per conversation, {chat.rate_per_minute()} predictions per minute."
)
st.caption(
    "Under each utterance too: the emotion categories a simple word-based classifier reads in "
    f"the dialogue so far, among {chat.LABEL_SET_NOTE}.",
    help=f"The categories track's baseline: {escape_markdown(chat.erc_label())}",
)


@st.cache_resource(show_spinner="Loading the model…")
def _backend(key: str, options: str):  # options: part of the cache key only
    return chat.make_backend(key)


@st.cache_resource(show_spinner="Loading the category classifier (trained once, in seconds)…")
def _erc():
    return chat.make_erc_backend()


@st.cache_data(show_spinner=False, max_entries=256)
def _replay_categories(dialogue_id: int):
    return chat.predict_categories(_erc(), _replay(dialogue_id))


@st.cache_resource(show_spinner=False)
def _pool():
    return chat.train_pool()


@st.cache_data(show_spinner=False)
def _replay_ids():
    return chat.replay_ids("test") + chat.replay_ids("valid")


@st.cache_data(ttl=30, show_spinner=False, max_entries=256)
def _cause_set(dialogue_id: int, turn: int, role: str):
    return cause_layer.cause_set(dialogue_id, turn, role)


@st.cache_data(show_spinner=False)
def _replay(dialogue_id: int):
    return chat.replay_dialogue(dialogue_id)


state = st.session_state
state.setdefault("chat_lines", [])

usable, unusable = chat.available(chat.choices())
options = {c.key: c for c in usable}
if not options:
    st.error("No model is available on this site right now; please come back later.")
    st.stop()
mode = st.radio(
    "Mode", ["Write a dialogue", "Replay a corpus dialogue"], key="chat_mode", horizontal=True
)
top = st.columns([3, 2])
asked = st.query_params.get("model")  # a link to one model (the board links to its card)
if asked in options and "chat_model" not in state:
    state["chat_model"] = asked
key = top[0].selectbox(
    "Model",
    list(options),
    key="chat_model",
    format_func=lambda k: options[k].label,
    help=chat.picker_help(list(options.values())) or None,
)
note = chat.unavailable_note(unusable)
if note:
    top[0].caption(escape_markdown(note))
picked = options[key]
# Counted in the board's database, keyed like the upload quota: a reload does not reset them.
limiter = state.setdefault("chat_limiter", chat.VisitorLimiter())
if isinstance(limiter, chat.VisitorLimiter):
    limiter.aim(limit_key(), picked)
k = 0
if picked.prompted:
    k = top[1].select_slider(
        "Worked examples shown to the model first",
        chat.SHOT_CHOICES,
        value=0,
        key="chat_shots",
        format_func=chat.shots_text,
        help="Few-shot prompting: before your dialogue the model sees this many solved "
        "training items (a dialogue and its author's transcription); none is zero-shot. The "
        "paper's baselines used 4.",
    )
else:
    top[1].caption("This model reads no instructions, so there are no examples to choose.")
if picked.card:
    with top[0].expander("Which weights are served", expanded=asked == picked.key):
        st.markdown(
            "\n".join(f"- {escape_markdown(line)}" for line in chat.card_lines(picked.card))
        )


def _predict(item, spend: bool = True) -> tuple[str | None, str | None]:
    """Stream the prediction here: (prediction, error); ``spend``: count it against the limit."""
    wait = state["chat_limiter"].take() if spend else 0
    if wait:
        return None, state["chat_limiter"].message(wait)
    raw: list[str] = []

    def chunks():
        pool = _pool() if picked.prompted else None
        for c in chat.stream_prediction(backend, item, k, pool, picked):
            raw.append(c)
            yield escape_markdown(c)

    try:
        backend = _backend(key, repr(picked.options))
        st.caption(escape_markdown(f"Predicted emotion transcription ({_model_text()}):"))
        st.write_stream(chunks())
    except EtcError as exc:
        return None, str(exc)
    return "".join(raw), None


def _model_text() -> str:
    return f"{picked.label}, {chat.shots_text(k)}" if picked.prompted else picked.label


def _show_prediction(line: dict) -> None:
    if line.get("error"):
        show_error(line["error"])
    elif line.get("prediction") is not None:
        st.caption(escape_markdown(f"Predicted emotion transcription ({line['model']}):"))
        st.markdown(escape_markdown(line["prediction"]))


def _categories(lines: list[tuple[str, str]]) -> dict:
    try:
        return {"categories": chat.conversation_categories(_erc(), lines)}
    except EtcError as exc:
        return {"categories_error": str(exc)}


def _show_categories(found: dict) -> None:
    if found.get("categories_error"):
        st.caption(escape_markdown(f"No predicted categories: {found['categories_error']}"))
    elif found.get("categories"):
        st.caption(
            "Predicted emotion categories: "
            f"**{escape_markdown(chat.categories_text(found['categories']))}**"
        )


# --- write a dialogue --------------------------------------------------------------------------


def _on_submit() -> None:
    text = state.get("chat_input")
    problem = chat.submit(state["chat_lines"], text, picked, state["chat_limiter"])
    if problem:
        if text and text.strip() and len(state["chat_lines"]) < chat.MAX_LINES:
            state["chat_held"] = text  # back into the box below, for the visitor to send again
            problem += " Your utterance is back in the box."
        state["chat_notice"] = problem


def _new_conversation() -> None:
    state["chat_lines"] = []


if mode == "Write a dialogue":
    lines = state["chat_lines"]
    for i, line in enumerate(lines):
        with utterance_message(line["who"], line["text"]):
            if line.get("pending"):
                context = [(ln["who"], ln["text"]) for ln in lines[: i + 1]]
                pred, err = _predict(chat.conversation_item(context), spend=False)
                line.update(
                    pending=False,
                    prediction=pred,
                    error=err,
                    model=_model_text(),
                    **_categories(context),
                )
                if err:
                    show_error(err)
            else:
                _show_prediction(line)
            _show_categories(line)
    notice = state.pop("chat_notice", None)
    if notice:
        st.warning(escape_markdown(notice))
    full = len(lines) >= chat.MAX_LINES
    if full:
        st.info(f"This conversation has {chat.MAX_LINES} utterances, the limit of the demo.")
    who = chat.next_speaker(lines)
    row = st.columns([4, 1])
    if not full:
        row[0].caption(
            f"Next utterance: **{who}** ({'speaker' if who == 'A' else 'listener'} role). "
            "A and B take turns, as in the corpus."
        )
    row[1].button("New conversation", key="chat_reset", on_click=_new_conversation)
    held = state.pop("chat_held", None)
    if held is not None:
        state["chat_input"] = held  # a refused utterance goes back into the box
    st.chat_input(
        f"Write {who}'s utterance in Japanese…",
        key="chat_input",
        on_submit=_on_submit,
        disabled=full,
        submit_mode="disable",  # no second utterance while this one's prediction runs
    )

# --- replay a corpus dialogue ------------------------------------------------------------------

else:
    ids = _replay_ids()
    did = st.selectbox(
        "Dialogue (test and validation splits: never seen by the retrieval index)",
        ids,
        key="chat_replay_id",
    )
    replay = state.get("chat_replay")
    if not replay or replay["id"] != did or replay["model"] != (key, k):
        replay = state["chat_replay"] = {"id": did, "model": (key, k), "step": 0, "out": {}}
    with shown_errors(stop=True):
        items = _replay(int(did))
    predicted: dict = {}
    if replay["step"]:  # the classifier is loaded only once an utterance is shown
        try:
            predicted = {"categories": _replay_categories(int(did))}
        except EtcError as exc:
            predicted = {"categories_error": str(exc)}
    buttons = st.columns([1, 1, 4])
    buttons[0].button(
        "Next utterance",
        key="chat_replay_next",
        disabled=replay["step"] >= len(items),
        type="primary",
        on_click=lambda: state["chat_replay"].update(step=state["chat_replay"]["step"] + 1),
    )
    buttons[1].button(
        "Restart",
        key="chat_replay_restart",
        on_click=lambda: state["chat_replay"].update(step=0, out={}),
    )
    st.caption(f"Utterance {replay['step']} of {len(items)}. Press “Next utterance” to go on.")
    for i, item in enumerate(items[: replay["step"]]):
        with utterance_message(item.target, item.utterance):
            mine, theirs = st.columns(2)
            with mine:
                if i in replay["out"]:
                    _show_prediction(replay["out"][i])
                else:
                    pred, err = _predict(item)
                    replay["out"][i] = {
                        "prediction": pred,
                        "error": err,
                        "model": _model_text(),
                    }
                    if err:
                        show_error(err)
            with theirs:
                st.caption("The participant's own transcription:")
                st.markdown(escape_markdown(item.reference))
                found = _cause_set(item.dialogue_id, item.turn, item.role)
                if found is not None:
                    st.caption(escape_markdown(cause_layer.cause_summary(found)))
            mine, theirs = st.columns(2)  # the categories side by side, on one line
            with mine:
                _show_categories(
                    {"categories": predicted["categories"][i]}
                    if "categories" in predicted
                    else predicted
                )
            with theirs:
                st.caption(
                    "Annotators' aggregated label: "
                    f"**{escape_markdown(chat.categories_text(item.label))}**"
                )
