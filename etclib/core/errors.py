"""Every exception that etclib raises on purpose.

The CLI turns an ``EtcError`` into its message and a non-zero exit status; the site turns it into
``st.error``. Anything else that escapes is a bug.
"""

from __future__ import annotations

from dataclasses import dataclass


class EtcError(Exception):
    """Base class: a problem the user can fix, with a message that says how."""

    exit_code = 1


class ConfigError(EtcError):
    """A setting, option or environment variable is missing or invalid."""

    exit_code = 2


class DataError(EtcError):
    """The corpus cannot be found or does not follow the expected schema."""


class DownloadError(EtcError):
    """Fetching the public corpus failed."""


class StoreError(EtcError):
    """A store cannot be built, opened or queried: the DuckDB corpus store, the studies database."""


class TaskError(EtcError):
    """A task item, split or prompt template is invalid."""


class OutputError(EtcError):
    """An output file cannot be written where it was asked for (a folder, a place not writable)."""


@dataclass(frozen=True)
class Problem:
    """One problem in a predictions file: the 1-based line (0 for the whole file) and what is
    wrong; ``until``, when set, the last line of a run of lines with this same problem."""

    line: int
    message: str
    until: int = 0

    @property
    def lines(self) -> str:
        """Where: ``"3"``, ``"1–1010"`` (a run), blank for the whole file."""
        if not self.line:
            return ""
        return f"{self.line}–{self.until}" if self.until > self.line else str(self.line)

    def __str__(self) -> str:
        if not self.line:
            return self.message
        return f"{'lines' if self.until > self.line else 'line'} {self.lines}: {self.message}"


def merge_runs(problems: list[Problem]) -> list[Problem]:
    """``problems`` with each run of the same message on consecutive lines as one problem
    ("lines 1–1010: missing field(s): prediction ..."), order kept."""
    out: list[Problem] = []
    for p in problems:
        last = out[-1] if out else None
        if (
            last is not None
            and last.line
            and p.line == max(last.line, last.until) + 1
            and p.message == last.message
        ):
            out[-1] = Problem(last.line, last.message, max(p.line, p.until))
        else:
            out.append(p)
    return out


class RefusedFileError(EtcError):
    """An input file was refused as a whole; ``problems`` lists what is wrong, first lines first."""

    #: What did not happen to a refused file, for the message ("nothing was scored").
    consequence = "nothing was read"

    def __init__(
        self, path: str, problems: list[Problem], shown: int = 10, total: int | None = None
    ):
        self.path = path
        self.problems = problems
        #: how many problems were found (``problems`` lists at most a capped number of them)
        self.total = max(total or 0, len(problems))
        head = "\n".join(f"  {p}" for p in problems[:shown])
        more = f"\n  ... and {self.total - shown} more problems" if self.total > shown else ""
        noun = "problem" if self.total == 1 else "problems"
        super().__init__(f"{path}: refused, {self.total} {noun}; {self.consequence}:\n{head}{more}")


class PredictionsError(RefusedFileError):
    """A predictions file was refused; nothing of it is scored or stored."""

    consequence = "nothing was scored"


class RatingsError(RefusedFileError):
    """A ratings CSV (judge-vs-human study 3) or a reference file was refused."""


class AnnotationError(EtcError):
    """A judge decision, sample or answer is invalid, or the studies database cannot be used."""


class AccessDenied(AnnotationError):
    """A missing, unknown or revoked annotator code, or a wrong or unset admin token."""

    exit_code = 3


class MetricError(EtcError):
    """A metric is unknown, misconfigured, or its model or tokenizer cannot be loaded."""


class DependencyError(EtcError):
    """An optional dependency is missing; the message names the package to install."""


class BackendError(EtcError):
    """A model backend is unknown, not configured, or failed to answer."""


class JudgeError(EtcError):
    """The LLM judge cannot run: missing key, unreachable endpoint, or unusable answers."""


class TrainError(EtcError):
    """Fine-tuning cannot start or failed."""


class ServiceError(EtcError):
    """A hosted model service (OpenAI, Gemini, a vLLM server) failed to give a usable answer:
    ``str(exc)`` is etclib's own words, safe to show to anyone (never the provider's text, the
    endpoint or a key); the provider's redacted text is in ``detail``, for logs and the admin
    view, and ``ref`` ties the two together. ``kind``: the failure's class (:mod:`etclib.llm.retry`).
    """

    def __init__(
        self,
        public: str,
        *,
        detail: str = "",
        ref: str | None = None,
        kind: str = "other",
        status: int | None = None,
    ):
        import uuid

        self.public = public
        self.ref = ref or uuid.uuid4().hex[:10]
        self.detail = detail
        self.kind = kind
        self.status = status
        super().__init__(f"{public} (ref {self.ref})")


class BackendServiceError(ServiceError, BackendError):
    """A hosted model backend's call failed; the public message is etclib's, ``detail`` private."""


class JudgeServiceError(ServiceError, JudgeError):
    """The LLM judge's provider failed so that the run must stop; ``detail`` is private."""


class QuotaExhaustedError(ServiceError, JudgeError):
    """A provider's quota is used up (billing, or a daily request quota): no wait within a run
    helps. Answers received before it are cached, so the same command resumes; ``where`` is the
    page to check the quota on."""

    exit_code = 11

    def __init__(self, public: str, *, provider: str, quota: str, where: str, **kwargs):
        self.provider = provider
        self.quota = quota
        self.where = where
        kwargs.setdefault("kind", "quota")
        super().__init__(public, **kwargs)


class JudgeIncompleteError(JudgeError):
    """Some items' judge requests failed after every retry: the judge scores are not complete."""

    exit_code = 10


class EmptyAnswerError(ServiceError):
    """The model answered nothing usable (``reason``: ``safety``, ``refusal``, ``output_limit``,
    ``no_candidate``, ``empty``)."""

    def __init__(self, public: str, *, reason: str, **kwargs):
        self.reason = reason
        kwargs.setdefault("kind", "blocked" if reason in ("safety", "refusal") else "empty")
        super().__init__(public, **kwargs)


class UnsupportedSettingError(ServiceError, ConfigError):
    """The model refused a decoding setting that etclib sent (e.g. ``temperature`` to GPT-5)."""

    def __init__(self, public: str, *, setting: str, **kwargs):
        self.setting = setting
        kwargs.setdefault("kind", "unsupported")
        super().__init__(public, **kwargs)
