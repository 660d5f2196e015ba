"""CSV for people to open in a spreadsheet: every export's one writer, whose text cells no
spreadsheet runs as a formula whatever separator it splits on.

A spreadsheet may split a row on ``,``, ``;`` or a tab (the list separator of the reader's
locale) and a cell on its line breaks. The csv module quotes a cell holding a comma or a line
break, but not one holding ``;`` or a tab, and a reader that splits on those starts a cell
inside it. So every place where a cell may start (the cell's start, after a line break, a ``;``
or a tab) that is followed, past spaces and double quotes, by ``=``, ``+``, ``-`` or ``@`` gets
an apostrophe, which spreadsheets read as "text"; so does one followed by a tab or a carriage
return, which some spreadsheets drop before reading on. Rows end in ``\\r\\n`` (RFC 4180): with ``\\n`` the csv module leaves a cell
holding a lone ``\\r`` unquoted, and a reader splits the row there.
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
