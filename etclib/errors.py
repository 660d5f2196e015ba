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
    """The DuckDB corpus store cannot be built or queried."""


class TaskError(EtcError):
    """A task item, split or prompt template is invalid."""


@dataclass(frozen=True)
class Problem:
    """One problem in a predictions file: the 1-based line (0 for the whole file) and what is wrong."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class RefusedFileError(EtcError):
    """An input file was refused as a whole; ``problems`` lists what is wrong, first lines first."""

    #: What did not happen to a refused file, for the message ("nothing was scored").
    consequence = "nothing was read"

    def __init__(self, path: str, problems: list[Problem], shown: int = 10):
        self.path = path
        self.problems = problems
        head = "\n".join(f"  {p}" for p in problems[:shown])
        more = f"\n  ... and {len(problems) - shown} more problems" if len(problems) > shown else ""
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(
            f"{path}: refused, {len(problems)} {noun}; {self.consequence}:\n{head}{more}"
        )


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
