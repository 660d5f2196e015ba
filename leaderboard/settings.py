"""The leaderboard's settings: environment variables (or ``.streamlit/secrets.toml``).

Every setting is read when used (``etclib.core.config.setting``), so tests and the site can change
them without restarting. See docs/leaderboard.md for the full table.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from etclib import metrics
from etclib.core.config import setting
from etclib.core.errors import ConfigError
from etclib.metrics import significance

DEFAULT_DB = Path("data") / "leaderboard.sqlite"
#: The default board of the earlier versions (a DuckDB file): `migrate --from` converts it.
LEGACY_DEFAULT_DB = Path("data") / "leaderboard.duckdb"
DEFAULT_WORKERS = 2

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def db_target(explicit: str | os.PathLike | None = None) -> str | Path:
    """The board: argument, ``ETC_LEADERBOARD_DB`` or the default; a URL or a file path."""
    from etclib.storage import target_of

    return target_of(explicit or setting("ETC_LEADERBOARD_DB") or DEFAULT_DB)


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """The leaderboard's database file (for a server URL, a path named after it without the
    password: a cache key, never a file to open)."""
    target = db_target(explicit)
    if isinstance(target, Path):
        return target
    from etclib.storage import redacted

    return Path(redacted(target).replace("://", "/"))


def _int(name: str, default: int, minimum: int) -> int:
    raw = setting(name)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer; set it to a whole number.") from None
    if value < minimum:
        raise ConfigError(f"{name}={value} is too small; the minimum is {minimum}.")
    return value


def _bool(name: str) -> bool:
    raw = setting(name)
    if raw is None:
        return False
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} must be 1/true/yes or 0/false/no.")


def daily_limit() -> int:
    """Submissions per submitter per UTC day (``ETC_LB_DAILY_LIMIT``, default 5; 0 refuses all)."""
    return _int("ETC_LB_DAILY_LIMIT", 5, 0)


def global_daily_limit() -> int:
    """Submissions per UTC day from everyone together (``ETC_LB_GLOBAL_DAILY_LIMIT``, default
    100; 0 refuses all): the cap that holds however many identities or addresses one uses."""
    return _int("ETC_LB_GLOBAL_DAILY_LIMIT", 100, 0)


def trusted_proxies() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """Reverse proxies whose ``X-Forwarded-For`` the site believes (``ETC_TRUSTED_PROXIES``:
    comma-separated addresses or networks; empty trusts none)."""
    raw = setting("ETC_TRUSTED_PROXIES") or ""
    out = []
    for part in (p.strip() for p in raw.split(",")):
        if not part:
            continue
        try:
            out.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ConfigError(
                f"ETC_TRUSTED_PROXIES: {part!r} is not an IP address or network; write e.g. "
                "'127.0.0.1, 10.0.0.0/8'."
            ) from None
    return out


def login_provider() -> str | None:
    """Which ``[auth.NAME]`` section of the Streamlit secrets ``st.login`` uses
    (``ETC_LOGIN_PROVIDER``); unset: the only one there is, or the unnamed ``[auth]`` provider."""
    return setting("ETC_LOGIN_PROVIDER")


def account_claims() -> tuple[str, ...]:
    """The OIDC claims tried in order for the account shown beside the team name
    (``ETC_LB_ACCOUNT_CLAIMS``, comma-separated; default ``preferred_username, email``)."""
    raw = setting("ETC_LB_ACCOUNT_CLAIMS")
    if not raw:
        return ("preferred_username", "email")
    claims = tuple(c.strip() for c in raw.split(",") if c.strip())
    if not claims:
        raise ConfigError("ETC_LB_ACCOUNT_CLAIMS names no claim; e.g. 'preferred_username,email'.")
    return claims


def max_queue() -> int:
    """Most submissions waiting for scoring at once (``ETC_LB_MAX_QUEUE``, default 50)."""
    return _int("ETC_LB_MAX_QUEUE", 50, 1)


def workers() -> int:
    """Scoring threads in the site process (``ETC_LB_WORKERS``, default 2; 0: the site scores
    nothing: ``python -m leaderboard worker`` processes do)."""
    return _int("ETC_LB_WORKERS", DEFAULT_WORKERS, 0)


def lease_seconds() -> int:
    """Seconds without a heartbeat before a job's worker counts as dead (default 60)."""
    return _int("ETC_LB_LEASE_SECONDS", 60, 1)


def pool_size() -> int:
    """Most connections one process opens to PostgreSQL (``ETC_LB_POOL_SIZE``, default 10)."""
    return _int("ETC_LB_POOL_SIZE", 10, 2)


def resamples() -> int:
    """Bootstrap resamples for intervals and rank bands (``ETC_LB_BOOTSTRAP``, default 1000: the
    same as ``etclib score --ci``, so its intervals are the board's)."""
    return _int("ETC_LB_BOOTSTRAP", significance.DEFAULT_RESAMPLES, 10)


def seed() -> int:
    """Seed of the bootstrap resample indices (``ETC_LB_SEED``, default 20260)."""
    return _int("ETC_LB_SEED", significance.DEFAULT_SEED, 0)


def max_attempts() -> int:
    """Crashes alone before a job is failed (``ETC_LB_MAX_ATTEMPTS``, default 3)."""
    return _int("ETC_LB_MAX_ATTEMPTS", 3, 1)


def retry_backoff() -> int:
    """Seconds after a job's first crash, doubled after each (``ETC_LB_RETRY_BACKOFF``, 2)."""
    return _int("ETC_LB_RETRY_BACKOFF", 2, 0)


def judge_retries() -> int:
    """Automatic re-runs of an incomplete judge stage (some items' requests failed after every
    retry) before it waits for an admin (``ETC_LB_JUDGE_RETRIES``, default 2; 0: none)."""
    return _int("ETC_LB_JUDGE_RETRIES", 2, 0)


def judge_retry_delay() -> int:
    """Seconds before the first automatic re-run of an incomplete judge stage, doubled for the
    next (``ETC_LB_JUDGE_RETRY_DELAY``, default 900: a provider's outage has time to pass)."""
    return _int("ETC_LB_JUDGE_RETRY_DELAY", 900, 0)


def quota_retry_delay() -> int:
    """Seconds a job waits for a used-up quota (``ETC_LB_QUOTA_RETRY_DELAY``, default 3600)."""
    return _int("ETC_LB_QUOTA_RETRY_DELAY", 3600, 0)


def bertscore_enabled() -> bool:
    """BERTScore runs when ``ETC_BERTSCORE_MODEL`` is set or ``ETC_LB_BERTSCORE`` is true."""
    return bool(setting("ETC_BERTSCORE_MODEL")) or _bool("ETC_LB_BERTSCORE")


def judge_provider() -> str | None:
    """``ETC_JUDGE_PROVIDER`` when the judge should run (etclib has the metric and the
    provider is configured), else None."""
    provider = setting("ETC_JUDGE_PROVIDER")
    if not provider or "judge" not in metrics.METRICS:
        return None
    from etclib import llm

    try:
        return provider if llm.configured(provider) else None
    except ConfigError:
        return None


def reference_dir() -> Path:
    """Folder of ``paper_baselines.json``: ``ETC_REFERENCE_DIR``, else the copy shipped in etclib."""
    from etclib.data.reference import reference_dir as folder

    return folder()


def hub_repo() -> str | None:
    """Hugging Face dataset repo receiving the public export (``ETC_LB_HUB_REPO``)."""
    return setting("ETC_LB_HUB_REPO")


def hf_token() -> str | None:
    """Token for the Hub push (``HF_TOKEN``)."""
    return setting("HF_TOKEN")
