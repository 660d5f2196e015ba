"""Chat: write a dialogue as A and B, or replay a corpus dialogue, and see each utterance's
predicted emotion transcription."""

import streamlit as st

from etclib.errors import EtcError
from views import chat
from views.errors import show_error, shown_errors
from views.navigation import ensure_app_navigation
from views.text import escape_markdown

ensure_app_navigation()

st.title("Chat with an emotion transcriber")
st.caption(
    "A is the speaker role (opens the dialogue), B the listener. After each utterance the chosen "
    "model writes what its author probably felt or intended, in Japanese, in the first person. "
    f"Limits: {chat.MAX_UTTERANCE_CHARS} characters per utterance, {chat.MAX_LINES} utterances "
    f"per conversation, {chat.RATE_PER_MINUTE} predictions per minute."
)


@st.cache_resource(show_spinner="Loading the model…")
def _backend(key: str, options: str):  # options: part of the cache key only
    return chat.make_backend(key)


@st.cache_resource(show_spinner=False)
def _pool():
    return chat.train_pool()


@st.cache_data(show_spinner=False)
def _replay_ids():
    return chat.replay_ids("test") + chat.replay_ids("valid")


@st.cache_data(show_spinner=False)
def _replay(dialogue_id: int):
    return chat.replay_dialogue(dialogue_id)


state = st.session_state
state.setdefault("chat_lines", [])
state.setdefault("chat_limiter", chat.RateLimiter())
state.setdefault("chat_author", "A")

options = {c.key: c for c in chat.choices()}
top = st.columns([2, 3, 2])
mode = top[0].radio(
    "Mode", ["Write a dialogue", "Replay a corpus dialogue"], key="chat_mode", horizontal=False
)
key = top[1].selectbox(
    "Model",
    list(options),
    key="chat_model",
    format_func=lambda k: options[k].label + ("" if options[k].usable else " (not configured)"),
)
picked = options[key]
k = 0
if picked.prompted:
    k = top[2].select_slider(
        "Solved examples in the prompt",
        chat.SHOT_CHOICES,
        value=0,
        key="chat_shots",
        format_func=lambda n: "zero-shot" if n == 0 else f"{n}-shot",
    )
else:
    top[2].caption("This model takes no prompt, so no k-shot setting.")
if not picked.usable:  # (a usable model's details, such as server addresses, stay private)
    st.warning(escape_markdown(f"{picked.label} is not configured on this site: {picked.reason}."))


def _predict(item) -> tuple[str | None, str | None]:
    """Stream the prediction into the current container; (prediction, error)."""
    wait = state["chat_limiter"].take()
    if wait:
        return None, chat.rate_message(wait)
    raw: list[str] = []

    def chunks():
        for c in chat.stream_prediction(backend, item, k, _pool() if picked.prompted else None):
            raw.append(c)
            yield escape_markdown(c)

    try:
        backend = _backend(key, repr(picked.options))
        st.caption(
            escape_markdown(f"Predicted emotion transcription ({picked.label}, {_shots_label()}):")
        )
        st.write_stream(chunks())
    except EtcError as exc:
        return None, str(exc)
    return "".join(raw), None


def _shots_label() -> str:
    return "no prompt" if not picked.prompted else ("zero-shot" if k == 0 else f"{k}-shot")


def _show_prediction(line: dict) -> None:
    if line.get("error"):
        show_error(line["error"])
    elif line.get("prediction") is not None:
        st.caption(escape_markdown(f"Predicted emotion transcription ({line['model']}):"))
        st.markdown(escape_markdown(line["prediction"]))


# --- write a dialogue --------------------------------------------------------------------------


def _on_submit() -> None:
    text = state.get("chat_input")
    problem = chat.utterance_problem(text, len(state["chat_lines"]))
    if problem:
        state["chat_notice"] = problem
        return
    wait = state["chat_limiter"].wait()
    if wait:
        state["chat_notice"] = chat.rate_message(wait)
        return
    state["chat_lines"].append({"who": state["chat_author"], "text": text, "pending": True})
    state["chat_author"] = "B" if state["chat_author"] == "A" else "A"


def _new_conversation() -> None:
    state["chat_lines"] = []
    state["chat_author"] = "A"


if mode == "Write a dialogue":
    lines = state["chat_lines"]
    for i, line in enumerate(lines):
        with st.chat_message(
            "user" if line["who"] == "A" else "assistant", avatar="🅰️" if line["who"] == "A" else "🅱️"
        ):
            st.text(f"{line['who']}: {line['text']}")
            if line.get("pending"):
                context = [(ln["who"], ln["text"]) for ln in lines[: i + 1]]
                pred, err = _predict(chat.conversation_item(context))
                line.update(
                    pending=False,
                    prediction=pred,
                    error=err,
                    model=f"{picked.label}, {_shots_label()}",
                )
                if err:
                    show_error(err)
            else:
                _show_prediction(line)
    notice = state.pop("chat_notice", None)
    if notice:
        st.warning(escape_markdown(notice))
    full = len(lines) >= chat.MAX_LINES
    if full:
        st.info(f"This conversation has {chat.MAX_LINES} utterances, the limit of the demo.")
    row = st.columns([1, 4, 1])
    row[0].radio(
        "Next utterance by",
        ["A", "B"],
        key="chat_author",
        horizontal=True,
        format_func=lambda w: "A (speaker)" if w == "A" else "B (listener)",
    )
    row[2].button("New conversation", key="chat_reset", on_click=_new_conversation)
    st.chat_input(
        f"Write {state['chat_author']}'s utterance in Japanese…",
        key="chat_input",
        max_chars=chat.MAX_UTTERANCE_CHARS,
        on_submit=_on_submit,
        disabled=full,
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
        letter = item.target
        with st.chat_message(
            "user" if letter == "A" else "assistant", avatar="🅰️" if letter == "A" else "🅱️"
        ):
            st.text(f"{letter}: {item.utterance}")
            mine, theirs = st.columns(2)
            with mine:
                if i in replay["out"]:
                    _show_prediction(replay["out"][i])
                else:
                    pred, err = _predict(item)
                    replay["out"][i] = {
                        "prediction": pred,
                        "error": err,
                        "model": f"{picked.label}, {_shots_label()}",
                    }
                    if err:
                        show_error(err)
            with theirs:
                st.caption(f"The participant's own transcription (label: {', '.join(item.label)}):")
                st.markdown(escape_markdown(item.reference))
