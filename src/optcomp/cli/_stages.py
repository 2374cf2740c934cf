"""Stage-level progress of a long CLI command on stderr (issue 27, item 12).

The engines' composition has no progress hook (``optcomp.pld`` is not instrumented), so a command that
can run for minutes — ``account --config`` with thousands of distinct mechanisms — shows which *stage*
it is in: ``stage i/n: what``, with a count and a bar where the stage walks a list (building the
mechanisms, answering the queries), and the elapsed time. Shown, like every bar of the CLI, only when
stderr is a terminal or ``optcomp --progress`` is given (:func:`optcomp.cli._common._show_progress`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from optcomp.cli._common import _progress_setting, _show_progress


class _Count(MofNCompleteColumn):
    """``done/total`` for a stage that walks a list; nothing for one that does not (no ``0/?``)."""

    def render(self, task: Task) -> Text:
        return Text("") if task.total is None else super().render(task)


class Stages:
    """The stages of one command, drawn one at a time on a transient rich display."""

    def __init__(self, progress: Progress, count: int) -> None:
        self._progress = progress
        self._count = count
        self._number = 0
        self._task: TaskID | None = None

    @property
    def progress(self) -> Progress:
        """The rich display (stop it around output printed on stdout between stages)."""
        return self._progress

    def start(self, what: str, total: int | None = None) -> Callable[[int], None]:
        """Show the next stage (replacing the previous one) and return its ``advance(items)``.

        Each stage is drawn at once, so even a short stage appears on the display once."""
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._number += 1
        task = self._progress.add_task(f"stage {self._number}/{self._count}: {what}", total=total)
        self._task = task
        self._progress.refresh()

        def advance(items: int) -> None:
            self._progress.advance(task, items)

        return advance


@contextmanager
def stages(count: int) -> Iterator[Stages]:
    """A :class:`Stages` display of ``count`` stages on stderr (disabled off a terminal without ``--progress``)."""
    console = Console(stderr=True, force_terminal=True if _progress_setting[0] else None)
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), _Count(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not _show_progress(console)) as progress:
        yield Stages(progress, count)
