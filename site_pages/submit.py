"""Submit: download the template, upload predictions, describe them, and follow the scoring."""

import streamlit as st

import leaderboard as lb
from etclib.core.errors import EtcError
from etclib.tracks import TRACKS
from etclib.tracks.predictions import MAX_FILE_BYTES
from leaderboard import settings as lb_settings
from leaderboard.owners import entry_of_key
from views import board, fields, identity, own_entries, upload_check, visitors
from views.errors import shown_errors
from views.navigation import ENTRY_PAGE, entry_params
from views.submission import show_problems
from views.text import escape_markdown

st.title("Submit predictions")
with shown_errors(stop=True):  # a damaged or unwritable board: "unavailable", before any form
    lb.open_db()
st.markdown(
    "Predict the emotion transcription of every utterance of the **test split** (1,010 items: "
    "all ten utterances of the 101 test dialogues) and upload the file. It is checked at once; "
    "accepted files are scored in the background and appear on the leaderboard. Each track "
    "takes its own field per item (its template below); the track is recognised from the "
    "file's fields."
)


@st.cache_data(show_spinner=False)
def _template(fmt: str, track: str) -> bytes:
    return board.template_bytes(fmt, track=track)


state = st.session_state
state.setdefault("submit_ids", [])
# the edit keys this page holds: its own receipts' and the private link it was opened with
state.setdefault("submit_edit_keys", [])
state["submit_edit_keys"] = own_entries.kept_keys(
    state["submit_edit_keys"], st.query_params.get(own_entries.EDIT_PARAM)
)
with shown_errors():
    visitor = identity.current_visitor()  # None: sign-in needed and not signed in
me = own_entries.owner(visitor, state["submit_edit_keys"])


# A fragment: saving an entry's changes reruns this part alone.
@st.fragment
def your_entries() -> None:
    with shown_errors():
        mine = lb.owned_entries(me)
    if mine.empty:
        if st.query_params.get(own_entries.EDIT_PARAM):
            st.warning(
                "This edit link names no entry: check that it was copied whole. (An entry "
                "the moderators removed is not shown.)"
            )
        return
    st.subheader("Your entries")
    left = ""
    if visitor is not None:
        with shown_errors():
            counted = "account" if visitor.kind == "account" else "network address"
            left = " " + own_entries.quota_text(lb.quota(visitor.key), counted)
    st.caption(
        "Rename an entry, edit its links and model facts, make it private (off the board until "
        "you make it public again) or withdraw it (off the board for good; it is kept for the "
        f"record). Every change is kept in its history.{left}"
    )
    linked = entry_of_key(st.query_params.get(own_entries.EDIT_PARAM) or "")
    for entry in mine.to_dict("records"):
        _entry(entry, opened=len(mine) == 1 or entry["id"] == linked)


def _entry(entry: dict, opened: bool) -> None:
    sid, title = entry["id"], TRACKS[entry["track"]].title
    words = own_entries.VISIBILITY_WORDS.get(entry["visibility"], entry["visibility"])
    with st.expander(f"{entry['name']} · {title} · {entry['status']} · {words}", expanded=opened):
        st.caption(escape_markdown(f"Submission {sid}, {entry['created_at']:%Y-%m-%d %H:%M} UTC"))
        if entry["status"] in ("scored", "partially scored", "incomplete"):
            with shown_errors():
                head, scores = own_entries.standing_view(lb.standing(sid), title)
                st.markdown(head)
                st.dataframe(scores, hide_index=True, key=f"submit_own_scores_{sid}")
        if entry["visibility"] == "public":
            st.page_link(
                ENTRY_PAGE, label="Its page on the board", icon="🔎", query_params=entry_params(sid)
            )
        said = state.pop(f"submit_own_said_{sid}", None)
        if isinstance(said, Exception):
            with shown_errors():
                raise said
        elif said:
            st.success(said)
        if entry["visibility"] in ("public", "private"):
            with st.form(f"submit_own_form_{sid}", enter_to_submit=False):
                _facts_inputs(f"submit_own_{sid}", entry, with_name=True)
                st.form_submit_button("Save changes", on_click=_change, args=(sid, "save"))
            c1, c2 = st.columns(2)
            other = "private" if entry["visibility"] == "public" else "public"
            c1.button(
                f"Make it {other}", key=f"submit_own_vis_{sid}", on_click=_change, args=(sid, other)
            )
            sure = c2.checkbox(
                "Withdraw it for good", key=f"submit_own_sure_{sid}", help="It cannot come back."
            )
            c2.button(
                "Withdraw",
                key=f"submit_own_withdraw_{sid}",
                disabled=not sure,
                on_click=_change,
                args=(sid, "withdrawn"),
            )
        with shown_errors():
            st.dataframe(
                own_entries.history_view(lb.entry_history(sid, me)),
                hide_index=True,
                key=f"submit_own_history_{sid}",
            )


def _change(sid: str, action: str) -> None:
    # A callback: it runs before the page does, so the page draws the entry as changed.
    try:
        if action == "save":
            fields = {f: state[f"submit_own_{sid}_{f}"] for f in lb.EDITABLE}
            done = lb.update_entry(sid, me, fields)
            state[f"submit_own_said_{sid}"] = "Saved." if done else "Nothing changed."
        else:
            lb.set_entry_visibility(sid, me, action)
    except lb.MetadataError as exc:
        words = own_entries.CHANGE_WORDS
        state[f"submit_own_said_{sid}"] = lb.MetadataError(
            {words.get(k, k): v for k, v in exc.fields.items()}
        )
    except EtcError as exc:  # shown, by shown_errors, when the entry is drawn
        state[f"submit_own_said_{sid}"] = exc


def _facts_inputs(prefix: str, values: dict, *, with_name: bool = False) -> dict[str, str]:
    """The details an owner can change later: the name, the links and the model facts."""
    out = {}
    if with_name:
        out["name"] = st.text_input(
            "Name on the board", values.get("name", ""), max_chars=80, key=f"{prefix}_name"
        )
    c1, c2 = st.columns(2)
    out["model_url"] = c1.text_input(
        "Model or code link (https://…)",
        values.get("model_url") or "",
        max_chars=500,
        key=f"{prefix}_model_url",
    )
    out["paper_url"] = c2.text_input(
        "Paper link (https://…)",
        values.get("paper_url") or "",
        max_chars=500,
        key=f"{prefix}_paper_url",
    )
    c3, c4, c5 = st.columns(3)
    out["parameters"] = c3.text_input(
        "Parameters (billions)",
        values.get("parameters") or "",
        max_chars=12,
        key=f"{prefix}_parameters",
        placeholder="e.g. 8 or 0.35",
    )
    weights = values.get("open_weights") or ""
    out["open_weights"] = c4.selectbox(
        "Open weights",
        lb.OPEN_WEIGHTS,
        index=lb.OPEN_WEIGHTS.index(weights) if weights in lb.OPEN_WEIGHTS else 0,
        format_func=lambda v: v or "not said",
        key=f"{prefix}_open_weights",
    )
    out["licence"] = c5.text_input(
        "Licence", values.get("licence") or "", max_chars=80, key=f"{prefix}_licence"
    )
    return out


your_entries()

st.subheader("1. Get the template")
for t in TRACKS.values():
    st.caption(f"{t.heading}: one record per item, `{t.example_record()}`: {t.help}")
    with shown_errors():
        for col, (fmt, label, mime) in zip(
            st.columns(2),
            (("jsonl", "JSON Lines", "application/jsonl"), ("csv", "CSV", "text/csv")),
        ):
            col.download_button(
                f"{t.template_label} ({label})",
                _template(fmt, t.name),
                file_name=t.template_file(fmt),
                mime=mime,
                key=f"submit_{t.tagged('template', '_')}_{fmt}",
                icon="⬇️",
            )

st.subheader("2. Upload your predictions")
upload = st.file_uploader(
    f"{board.accepted_types_text()}, UTF-8, at most {MAX_FILE_BYTES // 10**6} MB",
    # Any file: a box restricted by type would refuse others only in a tooltip.
    key="submit_file",
)
check = None
if upload is not None:
    check = upload_check.checked(upload.getvalue(), upload.name, identity.limit_key())
    # A refusal is shown from the session's state: the server lets the refused file go.
    state["submit_refused"] = None if check.ok else check
    if not check.ok:
        visitors.release(upload, "submit_file")
        upload = None  # the page's namespace outlives the run (its functions keep it)
if check is not None and check.ok:
    st.success(
        escape_markdown(
            f"{check.name}: valid, {check.items:,} predictions ({check.format}) for the "
            f"{TRACKS[check.track].title} track."
        )
    )
    for w in check.warnings:
        st.warning(escape_markdown(w))
elif state.get("submit_refused") is not None:
    refused = state["submit_refused"]
    if len(refused.problems) == 1 and not refused.problems[0].line:  # about the whole file
        said = f"{refused.problems[0].message} Nothing was stored."
    else:
        first = f" First: {refused.problems[0]}" if refused.problems else ""
        said = (
            f"{max(refused.problem_count, len(refused.problems)):,} problem(s); fix them and "
            f"upload again. Nothing was stored.{first}"
        )
    st.error(escape_markdown(f"{refused.name} was refused: {said}"))
    show_problems(board.problems_table(refused.problems), "submit_problems")

st.subheader("3. Describe the system")
# Who the daily limit counts: the signed-in account with a login provider, else the address.
with shown_errors():
    limit = lb_settings.daily_limit()
    per_day = f"{limit} submission{'' if limit == 1 else 's'}"
    if identity.login_configured():
        identity.check_login_setup()
        if visitor is None:
            st.info(
                f"Sign in to submit. The limit is {per_day} per account per UTC day, "
                "and the leaderboard shows the account you sign in with beside the team name."
            )
            st.button(
                "Sign in",
                key="submit_login",
                icon="🔑",
                on_click=st.login,
                args=(identity.login_provider(),),
            )
        else:
            who = st.columns([5, 1])
            who[0].caption(
                escape_markdown(
                    f"Signed in as {visitor.account}: the leaderboard shows this account beside "
                    "the team name. " + own_entries.quota_text(lb.quota(visitor.key), "account")
                )
            )
            who[1].button("Sign out", key="submit_logout", on_click=st.logout)
    elif visitor is not None:
        st.caption(
            "This site has no sign-in: the limit counts per network address, so people who "
            "share an address (a lab, a campus) share it. "
            + own_entries.quota_text(lb.quota(visitor.key), "network address")
        )
with st.form("submit_form", clear_on_submit=False, enter_to_submit=False):
    name = st.text_input("Display name *", max_chars=80, key="submit_name")
    team = st.text_input("Team or author", max_chars=120, key="submit_team")
    contact = st.text_input(
        "Contact (e-mail or handle, never shown)", max_chars=200, key="submit_contact"
    )
    facts = _facts_inputs("submit", {})  # links and model facts: optional, changeable later
    description = st.text_area("Description", max_chars=2000, key="submit_description")
    c3, c4 = st.columns(2)
    setting = c3.selectbox("Setting", lb.SETTINGS, index=len(lb.SETTINGS) - 1, key="submit_setting")
    saw_test = c4.radio(
        "Did the system see test data (training, prompts, tuning)?",
        lb.SAW_TEST,
        index=len(lb.SAW_TEST) - 1,
        key="submit_saw_test",
        horizontal=True,
    )
    sent = st.form_submit_button(
        "Submit for scoring", type="primary", disabled=not (check and check.ok and visitor)
    )

if sent and check is not None and check.predictions is not None and visitor is not None:
    meta = {
        "name": name,
        "team": team,
        "contact": contact,
        **facts,
        "description": description,
        "setting": setting,
        "saw_test": saw_test,
    }
    receipt = None
    with shown_errors():  # a refusal other than the two below: its message
        try:
            receipt = lb.submit(
                check.predictions,  # validated above: stored without reading the file again
                meta,
                submitter=visitor.key,
                account=visitor.account,
                issuer=visitor.issuer,
            )
        except lb.MetadataError as exc:
            st.error("Some details were refused; nothing was stored.")
            rows = [{"field": fields.label(k), "problem": v} for k, v in exc.fields.items()]
            show_problems(rows, "submit_meta_problems", ["field", "problem"])
        except lb.SubmissionError as exc:
            st.error("The file was refused; nothing was stored.")
            show_problems(board.problems_table(exc.problems), "submit_sub_problems")
    if receipt is not None:
        visitors.release(upload, "submit_file")  # stored: the server lets the file go
        upload = None
        if receipt.id in state["submit_ids"]:
            state["submit_ids"].remove(receipt.id)
        state["submit_ids"].insert(0, receipt.id)
        if receipt.duplicate:
            st.info(escape_markdown(receipt.duplicate_text(name)) + " Its status is below.")
        else:
            st.success(f"Received as submission {receipt.id}.")
            state["submit_edit_keys"] = own_entries.kept_keys(
                state["submit_edit_keys"], receipt.edit_key
            )
            # shown this once: only its hash is kept, so no one can show it again
            state["submit_new_link"] = own_entries.edit_link(st.context.url, receipt.edit_key)

if state["submit_ids"]:
    st.subheader("4. Scoring status")
    current = state["submit_ids"][0]
    link = state.get("submit_new_link")
    if link and link.partition("=")[2].startswith(f"{current}."):
        st.info(
            "Your private edit link, shown only now: keep it to rename this entry, edit its "
            "links and model facts, make it private or withdraw it. Anyone with it can."
        )
        st.code(link, language=None)
    live = not board.submission_status(current)["final"]

    @st.fragment(run_every=2 if live else None)
    def _status() -> None:
        s = None
        with shown_errors():
            s = board.submission_status(current)
        if s is None:
            return
        label = {
            "queued": "🕒",
            "scoring": "⚙️",
            "partially scored": "🧩",
            "incomplete": "⚠️",
            "scored": "✅",
        }
        st.markdown(f"**Submission {current}**: {label.get(s['status'], '❌')} {s['status']}")
        if s.get("queue_position"):
            st.caption(f"Position in the queue: {s['queue_position']}")
        if s.get("message"):
            st.text(s["message"])
        if s["status"] == "incomplete":
            st.warning(
                "Some items could not be judged, so this entry is not ranked on the judge's "
                "metrics (its other scores are on the board). The operators see every reason "
                "and can complete it; only the failed items are asked again."
            )
        scored = s["status"] in ("scored", "partially scored", "incomplete")
        if scored:
            with shown_errors():
                standing = lb.standing(current)
                head, scores = own_entries.standing_view(standing, TRACKS[s["track"]].title)
                st.markdown(head)
                st.dataframe(scores, hide_index=True, key=f"submit_standing_{current}")
        if scored and s["visibility"] == "public":  # a private one is on no board
            st.page_link(
                ENTRY_PAGE,
                label="Open its page on the board",
                icon="🔎",
                query_params=entry_params(current),
            )
        history = board.history_table(s)
        if not history.empty:
            st.dataframe(history, hide_index=True, key=f"submit_history_{current}")
        if s["final"] and live:
            st.rerun()  # stop refreshing: rebuild the page once without the timer

    _status()
