"""Where etclib finds its data, caches and settings.

Settings come from (first wins): an explicit argument, an environment variable, the Streamlit
secrets file ``.streamlit/secrets.toml`` (read as a plain TOML file, so the CLI sees the same
values as the site), then a documented default.
"""

from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path

from etclib.core.errors import ConfigError

#: Pinned commit of github.com/UEC-InabaLab/ETCDataset (README.md, "The corpus").
DATASET_COMMIT = "6c4f7e10ff2cd3191c2375248b35de095a480d91"
DATASET_URL = f"https://codeload.github.com/UEC-InabaLab/ETCDataset/tar.gz/{DATASET_COMMIT}"

DEFAULT_DATA_DIR = Path("data") / "ETCDataset" / "etc"
DEFAULT_STORE_DB = Path("data") / "etc.duckdb"


@lru_cache(maxsize=4)
def _secrets(path: str) -> dict:
    p = Path(path)
    if not p.is_file():
        return {}
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc}); fix or remove the file.") from exc


def setting(name: str, default: str | None = None) -> str | None:
    """The value of setting ``name`` from the environment, else ``.streamlit/secrets.toml``."""
    value = os.environ.get(name)
    if value not in (None, ""):
        return value
    secrets_file = os.environ.get("ETC_SECRETS_FILE", str(Path(".streamlit") / "secrets.toml"))
    value = _secrets(secrets_file).get(name)
    if value not in (None, ""):
        return str(value)
    return default


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The corpus folder (holding ``dialogues/``): ``--data``, ``ETC_DATA_DIR``, or the default."""
    return Path(explicit or setting("ETC_DATA_DIR") or DEFAULT_DATA_DIR)


def store_path(explicit: str | os.PathLike | None = None) -> Path:
    """The DuckDB corpus store: argument, ``ETC_STORE_DB``, or ``data/etc.duckdb``."""
    return Path(explicit or setting("ETC_STORE_DB") or DEFAULT_STORE_DB)


def cache_dir() -> Path:
    """Cache folder for tokenisation, model indexes and judge answers (``ETC_CACHE_DIR``)."""
    explicit = setting("ETC_CACHE_DIR")
    if explicit:
        path = Path(explicit)
    else:
        from platformdirs import user_cache_dir

        path = Path(user_cache_dir("etclib"))
    path.mkdir(parents=True, exist_ok=True)
    return path
