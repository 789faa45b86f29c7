"""The base of every blockviz scene: where its record comes from, its focus token and head, its title and captions."""

from __future__ import annotations

import os

from manim import DOWN, UP, AnimationGroup, FadeIn, FadeOut, LaggedStart, Mobject, ReplacementTransform, Scene, Text, VGroup, config
from manim.animation.animation import prepare_animation

from blockviz.scenes.grids import Highlight, NumberGrid
from blockviz.scenes.layout import fit_between, fit_width, frame_text_width
from blockviz.scenes.look import CAPTION_SIZE, FRAME_MARGIN, TITLE_SIZE, look
from blockviz.scenes.text import text
from blockviz.selection import select_head, select_token
from blockviz.tokens import display_token

DEFAULT_SENTENCE = "the cat sat"
RECORD_ENVIRONMENT_VARIABLE = "BLOCKVIZ_RECORD"
"""Path of a saved record for a scene run by the plain ``manim`` command (else the default sentence)."""


class RecordScene(Scene):
    """A Manim scene that animates the real numbers of one :class:`~blockviz.block_record.BlockRecord`.

    ``blockviz render`` builds it with the record, the focus token, the head and the theme.
    Under plain ``manim -ql scenes/<file>.py <Scene>`` it is built without arguments and records
    :data:`DEFAULT_SENTENCE` (or loads the file named by ``$BLOCKVIZ_RECORD``).

    Pacing is set by class attributes, so a variant is a two-line subclass.

    Attributes
    ----------
    step_time
        Run time (s) of one animation step.
    pause
        Wait (s) after a step, for the viewer to read.
    detailed_rows_max
        Sentences of at most this many tokens get every row worked in detail; longer ones only
        the focus token's row.
    """

    step_time = 0.8
    pause = 0.6
    detailed_rows_max = 4

    def __init__(self, record=None, token: str | int | None = None, head: int | None = 0, theme: str = "dark", **kwargs) -> None:
        self._record = record
        self.token = token
        self.head = head
        self.look = look(theme)
        self.caption: Mobject | None = None
        self.sums: list[tuple[list[Text], Text]] = []
        self._after_play: list = []
        self.play_listeners: list = []  # called with the scene after every play (progress, tests)
        super().__init__(**kwargs)

    # -- the numbers ------------------------------------------------------------------------------
    @property
    def record(self):
        """The record shown (recorded on first use if none was given)."""
        if self._record is None:
            from blockviz.block_record import BlockRecord, record

            path = os.environ.get(RECORD_ENVIRONMENT_VARIABLE)
            self._record = BlockRecord.load(path) if path else record(DEFAULT_SENTENCE)
        return self._record

    @property
    def focus(self) -> int:
        """Position of the focus token: ``token`` is a word, ``word#k`` or a 0-based position
        (:func:`blockviz.selection.select_token`); the last token by default."""
        return select_token(self.record.tokens, self.token)

    @property
    def h(self) -> int:
        """The head shown (:func:`blockviz.selection.select_head`: 0 by default)."""
        return select_head(self.head, self.record.config.n_heads)

    @property
    def token_names(self) -> list[str]:
        """The record's tokens as drawn (:func:`blockviz.tokens.display_token`): grid headers."""
        return [display_token(token) for token in self.record.tokens]

    def token_name(self, i: int) -> str:
        """Token ``i`` as drawn, e.g. in a caption."""
        return display_token(self.record.tokens[i])

    def limit(self, name: str) -> float:
        """The colour scale of quantity ``name`` (a field or a parameter) in this record:
        :meth:`~blockviz.block_record.BlockRecord.scale_limit`, the same in every scene."""
        return self.record.scale_limit(name)

    def detailed_rows(self) -> list[int]:
        """Query rows worked in detail: all rows of a short sentence, else the focus row."""
        return list(range(self.record.n)) if self.record.n <= self.detailed_rows_max else [self.focus]

    # -- scene furniture --------------------------------------------------------------------------
    def setup(self) -> None:
        self.camera.background_color = self.look.background

    def show_title(self, shown: str) -> Text:
        """Put ``shown`` at the top of the frame (at once: titles are not animated)."""
        title = fit_width(text(shown, TITLE_SIZE, self.look.text, bold=True), frame_text_width())
        title.to_edge(UP, buff=FRAME_MARGIN)
        self.add(title)
        return title

    def place(self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, grow: float = 1.5) -> Mobject:
        """Fit ``layout`` (growing it at most ``grow`` ×) between the title and the bottom
        ``bottom_space`` (the caption's band, and any work line), centred there."""
        return fit_between(layout, title.get_bottom()[1] - 0.25, -config.frame_height / 2 + bottom_space, grow)

    def say(self, shown: str) -> list:
        """Animations replacing the caption at the bottom of the frame with ``shown``."""
        new = fit_width(text(shown, CAPTION_SIZE, self.look.text), frame_text_width())
        new.to_edge(DOWN, buff=FRAME_MARGIN)
        old, self.caption = self.caption, new
        if old is None:
            return [FadeIn(new, shift=UP * 0.2)]
        return [self.one_after_another(FadeOut(old, shift=UP * 0.2), FadeIn(new, shift=UP * 0.2))]

    @staticmethod
    def one_after_another(*animations):
        """The animations in turn, within one play (so two texts never cross-fade in one place)."""
        return LaggedStart(*animations, lag_ratio=1.0)

    def shown_sum(self, parts: list[Text], total: Text) -> None:
        """Note that ``total`` is shown as the sum of ``parts`` (tests check it adds up)."""
        self.sums.append((list(parts), total))

    # -- drawing few shapes per frame -------------------------------------------------------------
    # Manim redraws, every frame, each mobject from the first animated one in `self.mobjects`
    # onwards; everything before it is drawn once. So: animated mobjects go to the end of the
    # list, labels that change are lifted out of their grid while they move, and cells change
    # colour under an overlay instead of being animated inside their grid.

    def play(self, *animations, **kwargs) -> None:
        prepared = [prepare_animation(animation) for animation in animations]
        self._bring_to_front(prepared)
        super().play(*prepared, **kwargs)
        while self._after_play:
            self._after_play.pop(0)()
        for listener in self.play_listeners:
            listener(self)

    def _bring_to_front(self, animations) -> None:
        animated = set()
        for animation in animations:
            for member in _animated_mobjects(animation):
                animated.add(id(member))
        moving = [m for m in self.mobjects if any(id(member) in animated for member in m.get_family())]
        still = [m for m in self.mobjects if m not in moving and not isinstance(m, Highlight)]
        self.mobjects = still + moving + [m for m in self.mobjects if isinstance(m, Highlight) and m not in moving]

    def replace_labels(self, grid: NumberGrid, new_labels: dict) -> list:
        """Animations turning grid labels into ``new_labels`` (``{(i, j): Text}``); only the
        labels move. Call :meth:`recolour` first if the cells change colour too."""
        animations = []
        for (i, j), new in new_labels.items():
            old = grid.set_label(i, j, new)
            if old is None:
                animations.append(FadeIn(new))
                continue
            grid.label_group.remove(old)
            self.add(old)
            animations.append(ReplacementTransform(old, new))
        self.adopt(grid, list(new_labels.values()))
        return animations

    def adopt(self, grid: NumberGrid, labels: list) -> None:
        """After the next play, move ``labels`` (top-level while animated) back into ``grid``."""

        def settle():
            self.remove(*labels)
            grid.label_group.add(*labels)

        self._after_play.append(settle)

    def recolour(self, grid: NumberGrid, fills: dict) -> list:
        """Animations changing the fill of cells ``{(i, j): colour}``: a coloured copy fades in
        over each cell, which takes the colour when the play ends."""
        if not fills:
            return []
        overlays = VGroup(*(grid.cells[key].copy().set_fill(fill, opacity=1) for key, fill in fills.items()))
        self.add(overlays)

        def settle():
            for key, fill in fills.items():
                grid.cells[key].set_fill(fill, opacity=1)
            self.remove(overlays)

        self._after_play.append(settle)
        return [FadeIn(overlays)]

    def sweep(self, highlight, targets, seconds_each: float = 0.4) -> None:
        """Move ``highlight`` over each of ``targets`` in turn (cheap: only the overlay moves)."""
        for target in targets:
            self.play(highlight.over(target), run_time=seconds_each)

    def rest(self, seconds: float | None = None) -> None:
        """Wait ``seconds`` (default :attr:`pause`); a still frame costs almost nothing to draw."""
        self.wait(self.pause if seconds is None else seconds)


def _animated_mobjects(animation) -> list:
    if isinstance(animation, AnimationGroup):
        return [member for inner in animation.animations for member in _animated_mobjects(inner)]
    return [animation.mobject] if getattr(animation, "mobject", None) is not None else []
