"""Tables a person reads at any width, 80 columns included: no identifier is ever cut.

rich shrinks a table that is wider than the terminal by wrapping its cells at spaces and, once a single word is
wider than its column, by cutting it with an ellipsis ("aws-us…") — a link, site or machine name the reader can no
longer tell from its neighbours. ``fitted`` prints the table when every word of every cell fits its column (and a
``no_wrap`` column's whole cell); a two-column table (a quantity and its value, a name and its detail) whose first
column is too wide for that keeps its two columns, the first wrapping at its words too (``wrapped``), as long as
every word of both still fits; any other table is printed with the same rows stacked: the first column's value on a
line of its own, then one "key: value" line per other column, each value wrapping under itself. ``keyed`` is that
layout for one note: "key: text" with the text wrapping under the text, not under the key.
"""

from __future__ import annotations

from copy import copy
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.table import Table


def minimum_width(table: Table, console: Console) -> int:
    """The narrowest the table renders without cutting a word: each column as wide as its longest word (its whole
    cell where the column does not wrap), plus the table's padding and borders."""
    from rich.measure import Measurement

    options = console.options.update_width(10_000)
    total = table._extra_width  # borders and separators (rich's own measure adds the same)
    for index, column in enumerate(table.columns):
        padding = table._get_padding_width(index)
        cells = [column.header, *column.cells]
        widths = [Measurement.get(console, options, cell) for cell in cells]
        total += max((w.maximum if column.no_wrap else w.minimum) for w in widths) + padding
    return total


def fits(table: Table, console: Console) -> bool:
    width = min(console.width, table.width) if table.width else console.width
    return minimum_width(table, console) <= width


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` as it fits ``console``: whole, or stacked (wrapped at the console's width even where the
    console soft-wraps its other output, as the CLI's do)."""
    console.print(fitted(table, console), soft_wrap=False)


def print_note(console: Console, key: str, text: str) -> None:
    """A note or warning under its key: "key: text", the text wrapping under itself at the console's width."""
    console.print(keyed(key, text), soft_wrap=False)


def fitted(table: Table, console: Console) -> RenderableType:
    """``table`` if it fits ``console`` without cutting a word; a two-column table with both columns wrapping if
    that fits; else its rows stacked as "key: value" lines."""
    if fits(table, console):
        return table
    if len(table.columns) == 2 and (two := wrapped(table, console)) is not None:
        return two
    return stacked(table)


def wrapped(table: Table, console: Console) -> Table | None:
    """A two-column table at the console's width with both columns wrapping at their words: the second (the value)
    keeps its widest cell where the line has room for it and is otherwise as wide as the first leaves it, the first
    no narrower than its longest word. None when their longest words side by side are wider than the line."""
    from dataclasses import replace

    from rich.measure import Measurement

    width = min(console.width, table.width) if table.width else console.width
    options = console.options.update_width(10_000)
    spans = []
    for column in table.columns:
        widths = [Measurement.get(console, options, cell) for cell in (column.header, *column.cells)]
        spans.append((max(w.minimum for w in widths), max(w.maximum for w in widths)))
    (key_least, key_most), (value_least, value_most) = spans
    room = width - table._extra_width - table._get_padding_width(0) - table._get_padding_width(1)
    if key_least + value_least > room:
        return None
    key = min(key_most, room - value_least)
    value = min(value_most, room - key)
    two = copy(table)
    first, second = table.columns
    two.columns = [replace(first, width=key, no_wrap=False), replace(second, width=value, no_wrap=False)]
    return two


def stacked(table: Table) -> RenderableType:
    """The rows one below the other: the first column's cell as the row's heading, then "column: value" lines."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    columns = table.columns
    parts: list[RenderableType] = []
    if table.title:
        parts.append(Text(str(table.title), style="bold") if isinstance(table.title, str) else table.title)
    rows = list(zip(*(list(column.cells) for column in columns), strict=True)) if columns else []
    for row in rows:
        heading, *values = row
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column(overflow="fold")  # a value longer than the whole line folds; it is never cut
        for column, value in zip(columns[1:], values, strict=True):
            if _blank(value):
                continue
            grid.add_row(f"{_header(column.header)}:", value)
        parts.append(Text(""))
        parts.append(heading if not isinstance(heading, str) else Text.from_markup(heading, style="bold"))
        parts.append(Padding(grid, (0, 0, 0, 2)))
    if table.caption:
        parts.append(Text(""))
        parts.append(Text(str(table.caption)) if isinstance(table.caption, str) else table.caption)
    return Group(*parts)


def keyed(key: str, text: str, style: str = "") -> RenderableType:
    """ "key: text" with the text wrapping under itself (a warning or a note under its key)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style=style)
    grid.add_column(overflow="fold")
    grid.add_row(f"{key}:", Text(text))
    return grid


def _header(header) -> str:
    return header.plain if hasattr(header, "plain") else str(header)


def _blank(value) -> bool:
    text = value.plain if hasattr(value, "plain") else str(value)
    return not text.strip()
