"""CSV for people to open in a spreadsheet: every export's one writer, whose text cells no
spreadsheet runs as a formula whatever separator it splits on.

A spreadsheet may split a row on ``,``, ``;`` or a tab and a cell on its line breaks, but the
csv module quotes only commas and line breaks. So every place where a cell may start (the
start, after a line break, ``;`` or a tab) followed, past spaces and quotes, by ``=``, ``+``,
``-``, ``@``, a tab or a carriage return gets an apostrophe ("text"). Rows end in ``\\r\\n``:
with ``\\n`` a cell holding a lone ``\\r`` is left unquoted, and a reader splits the row there.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

# Where a cell may start (the start, after a line break, a ";" or a tab) and be a formula.
_CELL_STARTS = re.compile(r"(?:^|(?<=[;\t\n])|(?<=\r)(?!\n))(?=[\t\r]|[ \"]*[=+\-@])")


def safe_cell(value: Any) -> Any:
    """``value`` as a cell that no spreadsheet runs as a formula (text only; other values as
    they are)."""
    return _CELL_STARTS.sub("'", value) if isinstance(value, str) else value


def dumps(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """CSV text of ``header`` and ``rows``, every cell through :func:`safe_cell`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([safe_cell(c) for c in header])
    writer.writerows([safe_cell(c) for c in row] for row in rows)
    return out.getvalue()
