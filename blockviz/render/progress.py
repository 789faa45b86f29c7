"""Progress of a render on the terminal: scenes done, animations played, lecture parts joined."""

from __future__ import annotations


class Progress:
    """Scene and animation progress on the terminal (stderr), drawn by :mod:`rich`; silent if
    disabled or if stderr is not a terminal. ``on_play`` is a :class:`~blockviz.scenes.base.RecordScene`
    play listener."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bar = None
        self._scenes = self._animations = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            # On stderr, so the printed file paths are all that stdout holds; and only on a
            # terminal (elsewhere rich would leave a stray blank line among the paths).
            console = Console(stderr=True)
            if not console.is_terminal:
                return self
            self._bar = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=True,
                console=console,
            )
            self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
            self._bar = None
        self._scenes = self._animations = None  # the next use draws new bars

    def start_scenes(self, total: int) -> None:
        if self._bar is not None:
            self._scenes = self._bar.add_task("scenes", total=total)

    def start_scene(self, name: str) -> None:
        if self._bar is not None:
            if self._animations is not None:
                self._bar.remove_task(self._animations)
            self._animations = self._bar.add_task(f"  {name}: animations", total=None)

    def on_play(self, scene) -> None:
        if self._bar is not None and self._animations is not None:
            self._bar.advance(self._animations)

    def finish_scene(self, name: str) -> None:
        if self._bar is not None:
            self._bar.advance(self._scenes)

    def start_joining(self, total: int):
        """A bar for joining ``total`` lecture parts; returns the ``progress(done, total)`` callback
        :func:`blockviz.lecture.write_lecture` calls."""
        task = self._bar.add_task("joining the lecture", total=total) if self._bar is not None else None

        def advance(done: int, total: int) -> None:
            if self._bar is not None and task is not None:
                self._bar.update(task, completed=done)

        return advance
