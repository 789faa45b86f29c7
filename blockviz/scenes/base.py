"""The base of every blockviz scene: where its record comes from, its focus token and head, its title and captions."""

from __future__ import annotations

import os
from collections.abc import Sequence

from manim import (
    DOWN,
    LEFT,
    UP,
    AnimationGroup,
    Group,
    LaggedStart,
    Mobject,
    RoundedRectangle,
    Scene,
    SVGMobject,
    Text,
    VGroup,
    Wait,
    config,
)
from manim.animation.animation import prepare_animation
from manim.utils.rate_functions import linear, smooth

from blockviz.head_choice import HeadChoice, choose_head
from blockviz.scenes import drawing_order, skipped_plays
from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.colour_bar import ColourBars, layout_top
from blockviz.scenes.fades import Conceal, FadeIn, FadeOut, lagged_windows, within
from blockviz.scenes.grids import Highlight, KeptName, NumberGrid, visible_slots
from blockviz.scenes.layout import fit_between, fit_width, fitting, frame_text_width, wrapped
from blockviz.scenes.light_timing import caption_in, caption_out
from blockviz.scenes.look import CAPTION_SIZE, FRAME_MARGIN, HOLD, MAX_SLOTS, MIN_CONTRAST, TITLE_SIZE, contrast, look
from blockviz.scenes.path_cache import PathCachingCamera
from blockviz.scenes.shown_scales import scene_scales
from blockviz.scenes.text import font_size_of, text, token_face
from blockviz.scenes.wording import Wording
from blockviz.selection import select_token
from blockviz.style import format_number

DEFAULT_SENTENCE = "the cat sat"
RECORD_ENVIRONMENT_VARIABLE = "BLOCKVIZ_RECORD"
"""Path of a saved record for a scene run by the plain ``manim`` command (else the default sentence)."""
FLIGHT_SHARE = 0.7
"""The share of a :meth:`RecordScene.fly` play the text spends moving (the rest: giving way)."""
SPEECH_PAUSE = 0.5
"""Seconds of silence after a caption's speech before the next caption (narrated scenes)."""


CAPTION_GAP = 0.25
"""Between a caption's top and the lowest part of the layout above it."""


class RecordScene(Scene):
    """A Manim scene that animates the real numbers of one :class:`~blockviz.block_record.BlockRecord`.

    ``blockviz render`` builds it with the record, the focus token, the head and the theme.
    Under plain ``manim -ql scenes/<file>.py <Scene>`` it is built without arguments and records
    :data:`DEFAULT_SENTENCE` (or loads the file named by ``$BLOCKVIZ_RECORD``).

    Pacing is set by class attributes, so a variant is a two-line subclass; ``pace`` (0.5–3,
    ``blockviz render --pace``) scales every run time and hold, and ``detail`` is how many query
    rows are worked step by step (``--detail``; the focus row first, the rest at once). With
    ``burned_captions=False`` (``--no-burned-captions``) no caption is drawn: the captions are
    still logged in :attr:`captions` (for the ``.srt``) and the layout keeps their band.

    Attributes
    ----------
    step_time
        Run time (s) of one animation step.
    hold
        Seconds the picture holds still after a step (:data:`~blockviz.scenes.look.HOLD`):
        frozen frames, cheap to render.
    top_keys
        How many of the keys the focus attends to most an elided token axis always draws.
    shows_one_head
        Whether the scene's pictures are one head's (its title names it): the first caption of
        such a scene says why that head was chosen when ``head="auto"`` chose it.
    settles_skipped_plays
        Whether a play whose frames are skipped goes straight to its end state
        (:func:`~blockviz.scenes.skipped_plays.settle`) rather than through Manim's play.
    """

    step_time = 1.0
    hold = HOLD
    top_keys = 3
    shows_one_head = False
    settles_skipped_plays = True

    def __init__(
        self,
        record=None,
        token: str | int | None = None,
        head: int | str | None = 0,
        theme: str = "dark",
        pace: float = 1.0,
        detail: int = 1,
        burned_captions: bool = True,
        voice=None,
        to: str | int | None = None,
        **kwargs,
    ) -> None:
        self._record = record
        self.to = to  # a key the head is chosen for and always labelled (render --to)
        self._head_choice: HeadChoice | None = None
        self.quoted: list[tuple[str, tuple]] = []  # (number as a caption writes it, its source in the record)
        self._head_said = False
        self.voice = voice  # a blockviz.narration.voice.Voice: each caption spoken (render --narrate)
        self.speech_ends = 0.0  # scene time at which the last caption's speech (and its pause) ends
        self.unspeakable: list[str] = []  # characters the voice read as "a token"
        self.token = token
        self.head = head
        self.look = look(theme)
        self.pace = float(pace)
        self.detail = int(detail)
        self.burned_captions = bool(burned_captions)
        self.caption: Mobject | None = None
        self.title_mobject: Mobject | None = None
        self.captions: list[tuple[float, str]] = []  # (scene time, caption) as each appears: one cue each
        self.sums: list[tuple[list[Text], Text]] = []
        self._after_play: list = []
        self._updaters_in_play: bool | None = None  # whether any mobject has an updater, during a play
        self.play_listeners: list = []  # called with the scene after every play (progress, tests)
        self.colour_bars = ColourBars()
        kwargs.setdefault("camera_class", PathCachingCamera)
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
        (:func:`blockviz.selection.select_token`); by default the last word token
        (:func:`blockviz.selection.default_token`: "tired" rather than the final ".", never a
        special token such as ``[SEP]``)."""
        return select_token(self.record.tokens, self.token, self.record.special)

    @property
    def head_choice(self) -> HeadChoice:
        """The head shown and the key followed (:func:`blockviz.head_choice.choose_head`: ``head``
        a number, 0 by default, or ``"auto"``; ``to`` the key), chosen once."""
        if self._head_choice is None:
            self._head_choice = choose_head(self.record, self.head, self.focus, self.to)
        return self._head_choice

    @property
    def h(self) -> int:
        """The head shown (:attr:`head_choice`)."""
        return self.head_choice.head

    @property
    def token_names(self) -> list[str]:
        """The record's tokens as grid headers draw them (:func:`~blockviz.scenes.text.token_face`:
        punctuation quoted, “.”); the focus and its :meth:`kept_keys` as
        :class:`~blockviz.scenes.grids.KeptName`, which headers never cut."""
        kept = {self.focus, *self.kept_keys()}
        return [
            KeptName(token_face(token)) if i in kept else token_face(token)
            for i, token in enumerate(self.record.tokens)
        ]

    def kept_keys(self) -> list[int]:
        """The keys an elided token axis always draws and labels in full, most important first:
        the key the head was chosen for (:attr:`head_choice`), then the keys the focus attends
        to most in the shown head (:meth:`top_keys_of`)."""
        key = self.head_choice.key
        return list(dict.fromkeys(([key] if key is not None else []) + self.top_keys_of(self.focus)))

    def quote(self, value: float, source: tuple, decimals: int = 2) -> str:
        """``value`` written for a caption (:func:`blockviz.style.format_number`), noted in
        :attr:`quoted` with its ``source`` in the record (the forms of
        :func:`blockviz.scenes.text.number`, and ``("baseline", head, query, key)``)."""
        shown = format_number(value, decimals)
        self.quoted.append((shown, source))
        return shown

    def head_sentence(self, noted: bool = True) -> str | None:
        """Why the shown head was chosen, when ``head="auto"`` chose it, else ``None``: "head 1 of
        layer 3: the head that puts most weight above its baseline from “it” on “chicken” (0.72;
        baseline 0.11)" (:func:`head_choice_sentence`). Its numbers are noted in :attr:`quoted`
        unless not ``noted`` (the sentence only measured, not shown)."""
        choice = self.head_choice
        if not choice.auto:
            return None
        f, key = self.focus, choice.key
        written = self.quote if noted else (lambda value, _source: format_number(value, 2))
        weight = written(choice.weight, ("weights", choice.head, f, key))
        baseline = written(choice.baseline, ("baseline", choice.head, f, key))
        return head_choice_sentence(self.record, choice, self.token_name(f), self.token_name(key), weight, baseline)

    def token_name(self, i: int) -> str:
        """Token ``i`` as a caption writes it inside its own quotes: as its header shows it
        (:attr:`token_names`), its quotes taken off: “tired”, “.”. A token the sentence has
        more than once is named as its header is, “the”, not as ``--token`` names it (“the#2”):
        the caption names what the viewer sees."""
        shown = self.token_names[i]
        return shown[1:-1] if shown.startswith("\u201c") and shown.endswith("\u201d") else shown

    @property
    def wording(self) -> Wording:
        """How captions name the steps of this record's architecture (:mod:`blockviz.scenes.wording`)."""
        return Wording.of(self.record)

    def top_keys_of(self, i: int, head: int | None = None, record=None) -> list[int]:
        """The keys query ``i`` attends to most in ``head`` (the shown head by default) of
        ``record`` (the scene's by default), most first: at most :attr:`top_keys`, none with weight 0."""
        weights = (record or self.record).weights[self.h if head is None else head, i].tolist()
        ranked = sorted(range(len(weights)), key=lambda j: -weights[j])
        return [j for j in ranked[: self.top_keys] if weights[j] > 0]

    def token_slots(self, limit: int = MAX_SLOTS, heads: Sequence[int] = ()) -> list[int | None]:
        """The token positions an elided token axis draws (``None`` = ⋯): the focus, the keys it
        attends to most in the shown head and the first token, never hidden (with ``heads``, the
        key it attends to most in each of them comes before the shown head's second and third, as
        room allows); then the focus's neighbours (:func:`~blockviz.scenes.grids.visible_slots`)."""
        shown = self.kept_keys()
        keep = shown[:1] + [key for head in heads for key in self.top_keys_of(self.focus, head)[:1]] + shown[1:]
        return visible_slots(self.record.n, self.focus, limit, keep=keep)

    def limit(self, name: str) -> float:
        """The colour scale of quantity ``name`` (a field or a parameter) in this record:
        :meth:`~blockviz.block_record.BlockRecord.scale_limit`, the same in every scene."""
        return self.record.scale_limit(name)

    def detailed_rows(self, shown: list[int] | None = None) -> list[int]:
        """Query rows worked step by step, in sentence order: the focus row and, with
        ``detail`` > 1, the shown rows nearest it (``shown``: the rows drawn, every row by default)."""
        shown = list(range(self.record.n)) if shown is None else [i for i in shown if i is not None]
        nearest = sorted(shown, key=lambda i: (abs(i - self.focus), i))
        return sorted(nearest[: max(1, self.detail)])

    # -- scene furniture --------------------------------------------------------------------------
    def setup(self) -> None:
        self.camera.background_color = self.look.background
        scene_scales()  # the grids of this scene share their colour scales (blockviz.scenes.shown_scales)

    def show_title(self, shown: str) -> Text:
        """Put ``shown`` at the top left of the frame (at once: titles are not animated), where
        the colour bars, top right, never make it move (they may make a long one shrink)."""
        title = fit_width(text(shown, TITLE_SIZE, self.look.text, bold=True), frame_text_width())
        title.to_edge(UP, buff=FRAME_MARGIN).to_edge(LEFT, buff=FRAME_MARGIN)
        self.add(title)
        self.title_mobject = title
        return title

    def place(self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, grow: float = 1.5) -> Mobject:
        """Fit ``layout`` (growing it at most ``grow`` ×) between the title and the bottom
        ``bottom_space`` (the caption's band, and any work line; at least :meth:`head_caption_band`),
        centred there."""
        bottom = -config.frame_height / 2 + max(bottom_space, self.head_caption_band())
        return fit_between(layout, layout_top(title), bottom, grow)

    def refit(self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, grow: float = 1.5):
        """An animation growing ``layout`` into the space :meth:`place` would give it now (after
        a secondary part has left): the main object takes the frame."""
        bottom = -config.frame_height / 2 + max(bottom_space, self.head_caption_band())
        scale, centre = fitting(layout, layout_top(title), bottom, grow)
        return layout.animate.scale(scale).move_to(centre)

    def head_caption_band(self) -> float:
        """The height, from the frame's bottom, of the caption that says why ``--head auto`` chose
        the shown head (:meth:`head_sentence`; often two lines) with a gap above it, if this scene
        will say it; else 0 (scene units)."""
        shown = self.head_sentence(noted=False) if self.shows_one_head and not self._head_said else None
        if shown is None or not self.burned_captions:
            return 0.0
        return wrapped(shown, CAPTION_SIZE, self.look.text, frame_text_width()).height + FRAME_MARGIN + CAPTION_GAP

    def say(self, shown: str) -> list:
        """Animations replacing the caption at the bottom of the frame with ``shown`` (on two
        lines if one is too long; never shrunk). ``caption.shown`` is the whole sentence. Without
        burned captions, only logged: no animation. With a :attr:`voice`, the caption is spoken
        as it appears (:meth:`speak`)."""
        self.speak(shown)
        if not self.burned_captions:
            self.captions.append((self.renderer.time, shown))
            return []
        new = wrapped(shown, CAPTION_SIZE, self.look.text, frame_text_width())
        new.to_edge(DOWN, buff=FRAME_MARGIN)
        new.is_caption = True
        old, self.caption = self.caption, new
        self.captions.append((self.renderer.time, shown))
        if old is None:
            return [FadeIn(new, shift=UP * 0.2, rate_func=caption_in)]
        return [FadeOut(old, shift=UP * 0.2, rate_func=caption_out), FadeIn(new, shift=UP * 0.2, rate_func=caption_in)]

    def speak(self, shown: str) -> None:
        """Speak caption ``shown`` with :attr:`voice` from now (nothing without a voice, or while
        plays are skipped): first hold the picture until the previous caption's speech and its
        :data:`SPEECH_PAUSE` have ended, so two captions are never spoken at once and each step
        lasts max(its animation and hold, its speech + the pause)."""
        if self.voice is None or self.renderer.skip_animations:
            return
        from pydub import AudioSegment

        from blockviz.narration.spoken import spoken, unspeakable

        self.hold_until(self.speech_ends)
        self.unspeakable += [char for char in unspeakable(shown) if char not in self.unspeakable]
        speech = self.voice.speak(spoken(shown))
        if len(speech.samples):
            segment = AudioSegment(speech.samples.tobytes(), sample_width=2, frame_rate=speech.rate, channels=1)
            # pydub places a sound at a whole millisecond, truncating: the clock's 13.99999… s
            # would start the speech a millisecond before its step's first frame
            self.renderer.file_writer.add_audio_segment(segment, round(self.renderer.time, 3))
        self.speech_ends = self.renderer.time + speech.seconds + SPEECH_PAUSE

    def tear_down(self) -> None:
        """The last caption's speech ends before the scene does, and the sound lasts as long as the picture."""
        if self.voice is None or self.renderer.skip_animations:
            return
        from pydub import AudioSegment

        self.hold_until(self.speech_ends)
        self.renderer.file_writer.add_audio_segment(AudioSegment.silent(0), round(self.renderer.time, 3))

    def hold_until(self, moment: float) -> None:
        """Hold the picture still until ``moment`` (seconds from the scene's start), if it is
        later than now: at least one frame, as Manim would round a shorter wait up to (with a
        warning of six lines)."""
        if self.renderer.time < moment:
            self.wait(max(moment - self.renderer.time, 1 / config.frame_rate))

    def step(
        self, *animations, caption: str | None = None, run_time: float | None = None, hold: float | None = None
    ) -> None:
        """One step: ``animations`` and its ``caption`` together, then the picture holds still.
        A scene that :attr:`shows_one_head` chosen by ``head="auto"`` says why first: its first
        step's animations come with :meth:`head_sentence`, then its own caption follows."""
        if caption is not None and self.shows_one_head and not self._head_said:
            self._head_said = True
            said = self.head_sentence()
            if said is not None:
                self.step(*animations, caption=said, run_time=run_time, hold=hold)
                animations = ()
        said = self.say(caption) if caption is not None else []
        run_time = self.step_time if run_time is None else run_time
        if animations or said:
            self.play(*animations, *said, run_time=run_time)
        else:  # a caption-only step without burned captions: the same time, still
            self.wait(run_time * self.pace)
        self.rest(hold)

    @staticmethod
    def one_after_another(*animations):
        """The animations in turn, within one play (so two texts never cross-fade in one place)."""
        return LaggedStart(*animations, lag_ratio=1.0)

    def products_then_sum(self, line: VGroup):
        """A work line's second line arriving in two beats: its terms, then "= total" (its last
        two parts)."""
        return self.one_after_another(FadeIn(VGroup(*line[:-2])), FadeIn(VGroup(*line[-2:])))

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
        still = all(isinstance(animation, Wait) for animation in prepared)
        if not still:  # a colour bar for every scale on screen once the play ends
            prepared += self.colour_bars.follow(self, prepared)
        if "run_time" in kwargs:
            kwargs["run_time"] *= 1.0 if still else self.pace  # a hold is paced by rest()
        elif not still:
            for animation in prepared:
                animation.run_time *= self.pace
        self._bring_to_front(prepared)
        if self._skipping() and self.settles_skipped_plays:
            skipped_plays.settle(self, prepared, **kwargs)
        elif self._skipping():
            with _no_drawing(self.renderer):
                super().play(*prepared, **kwargs)
        else:
            try:
                super().play(*prepared, **kwargs)
            finally:
                self._updaters_in_play = None
        while self._after_play:
            self._after_play.pop(0)()
        if not still:  # a hold changes nothing on screen
            for listener in self.play_listeners:
                listener(self)

    def begin_animations(self) -> None:
        """Begin the play's animations, with every still mobject clear of them drawn once
        (:func:`~blockviz.scenes.drawing_order.still_first`)."""
        for animation in self.animations:  # as Manim's, with the order changed before it splits moving from still
            animation._setup_scene(self)
            animation.begin()
        self.mobjects = drawing_order.still_first(self.mobjects, self.animations)
        self.moving_mobjects, self.static_mobjects = self.get_moving_and_static_mobjects(self.animations)
        self._updaters_in_play = any(member.updaters for member in self.get_mobject_family_members())

    def update_mobjects(self, dt: float) -> None:
        """Manim's, which calls every mobject's updaters in every frame: nothing to call in a play
        where no mobject has one (it would walk every mobject of the scene to find none)."""
        if self._updaters_in_play is False:
            return
        super().update_mobjects(dt)

    def _skipping(self) -> bool:
        """Whether no frame of the plays is written: a still (``--format png``: Manim draws the
        last frame when the scene ends) or a build with animations skipped (tests)."""
        renderer = self.renderer
        output = getattr(getattr(renderer, "file_writer", None), "output_spec", None)
        return bool(getattr(renderer, "_original_skipping_status", False) or getattr(output, "is_still", False))

    def _bring_to_front(self, animations) -> None:
        animated = set()
        for animation in animations:
            for leaf in leaves(animation):
                if getattr(leaf, "mobject", None) is not None:
                    animated.add(id(leaf.mobject))
        moving = [m for m in self.mobjects if any(id(member) in animated for member in m.get_family())]
        still = [m for m in self.mobjects if m not in moving and not isinstance(m, Highlight)]
        self.mobjects = _layered(
            still + moving + [m for m in self.mobjects if isinstance(m, Highlight) and m not in moving]
        )

    def add(self, *mobjects):
        """Add ``mobjects``; texts stay drawn above cells and highlights above everything (a
        number arriving in a cell is never hidden under a cell that fades in with it)."""
        super().add(*mobjects)
        self.mobjects = _layered(self.mobjects)
        return self

    def replace_labels(self, grid: NumberGrid, new_labels: dict) -> list:
        """Animations turning grid labels into ``new_labels`` (``{(i, j): Text}``): the old
        numbers leave, then the new ones arrive (a digit never morphs into another). Call
        :meth:`recolour` first if the cells change colour too."""
        leaving, arriving = [], []
        for (i, j), new in new_labels.items():
            old = grid.set_label(i, j, new)
            arriving.append(FadeIn(new))
            if old is None:
                continue
            grid.label_group.remove(old)
            self.add(old)
            leaving.append(FadeOut(old))
            self._after_play.append(lambda old=old: self.remove(old))
        self.adopt(grid, list(new_labels.values()))
        if not leaving:  # still the second half: a cell recoloured with them has its colour by then
            return [AnimationGroup(*(FadeIn(animation.mobject, rate_func=second_half) for animation in arriving))]
        return [self.one_after_another(AnimationGroup(*leaving), AnimationGroup(*arriving))]

    def adopt(self, grid: NumberGrid, labels: list) -> None:
        """After the next play, move ``labels`` (top-level while animated) back into ``grid``."""

        def settle():
            self.remove(*labels)
            grid.label_group.add(*labels)

        self._after_play.append(settle)

    def recolour(self, grid: NumberGrid, fills: dict) -> list:
        """Animations changing the fill of cells ``{(i, j): colour}``: a coloured copy appears
        over each cell halfway through the play — when :meth:`replace_labels` and :meth:`carry`
        have taken the old numbers off and not yet put the new ones on, so no number is ever
        on a colour it was not made for — and the cell takes the colour when the play ends."""
        if not fills:
            return []
        overlays = VGroup(*(grid.cells[key].copy().set_fill(fill, opacity=1) for key, fill in fills.items()))
        overlays.recolouring = True
        self.add(overlays)

        def settle():
            for key, fill in fills.items():
                grid.cells[key].set_fill(fill, opacity=1)
            self.remove(overlays)

        self._after_play.append(settle)
        return [FadeIn(overlays, rate_func=halfway)]

    def cascade(self, grid: NumberGrid, fills: dict, labels: dict) -> list:
        """Animations giving cells their ``fills`` (``{(i, j): colour}``) and ``labels``
        (``{(i, j): Text}``) row after row, as a ``LaggedStart`` of rows
        (:func:`~blockviz.scenes.fades.lagged_windows`); cells of a single row arrive one after
        another. In each row's stretch of the play, as :meth:`recolour` and
        :meth:`replace_labels` time a whole play: its old numbers leave, its colour changes,
        its new numbers arrive. So no frame changes more than a few rows' worth of pixels."""
        return self.lagged(self.cascade_parts(grid, fills, labels))

    def cascade_parts(self, grid: NumberGrid, fills: dict, labels: dict) -> list[list]:
        """The parts of :meth:`cascade` before they are lagged: each row's (or, in a single row,
        each cell's) animations, timed over a whole play; for :meth:`lagged` to run after
        another grid's parts."""
        keys = list(dict.fromkeys([*fills, *labels]))
        part_of = (lambda key: key[0]) if len({i for i, _ in keys}) > 1 else (lambda key: key[1])
        parts = []
        for part in sorted({part_of(key) for key in keys}):
            changes = self.recolour(grid, {key: fill for key, fill in fills.items() if part_of(key) == part})
            part_labels = {key: label for key, label in labels.items() if part_of(key) == part}
            parts.append(changes + (self.replace_labels(grid, part_labels) if part_labels else []))
        return parts

    @staticmethod
    def lagged(parts: list[list]) -> list:
        """``parts`` (each a list of animations timed over a whole play) one after another in
        one play, as a ``LaggedStart`` (:func:`~blockviz.scenes.fades.lagged_windows`): each
        part's animations run inside its own stretch, with their timing in it unchanged."""
        for animation in (animation for part in parts for animation in part):
            animation.run_time = 1  # each spans its part's stretch, as a play's animations span the play
        groups = [
            AnimationGroup(*part, rate_func=within(linear, start, end))
            for part, (start, end) in zip(parts, lagged_windows(len(parts)))
            if part
        ]
        for group in groups:
            group.cascade = True
        return groups

    def fly(self, source: Text, target: Mobject):
        """One animation: a copy of the text ``source`` moves onto the text in ``target`` (a text,
        or a header on its chip), taking its size, its first glyph onto the target's first glyph
        — the same glyphs all the way, legible in flight, where a transform between two strings
        garbles them — then gives way to ``target`` (which may be shortened: “grandm…”)."""
        copy = source.copy()
        self.add(copy)
        self._after_play.append(lambda: self.remove(copy))
        anchor = next((member for member in target.get_family() if isinstance(member, Text)), target)
        goal = copy.copy().scale(font_size_of(anchor) / font_size_of(source))
        ends = (goal[0], anchor[0]) if len(goal.submobjects) and len(anchor.submobjects) else (goal, anchor)
        goal.shift(ends[1].get_center() - ends[0].get_center())
        move = copy.animate(run_time=FLIGHT_SHARE / (1 - FLIGHT_SHARE)).become(goal)
        return self.one_after_another(move, AnimationGroup(FadeOut(copy), FadeIn(target)))

    def carry(self, sources, targets):
        """One animation: copies of ``sources`` slide onto ``targets`` on their chips, leave
        (the number, then its chip), then the ``targets`` arrive (numbers move where they are
        used; no digit morphs into another)."""
        return self.one_after_another(
            *self._ride(sources, targets), AnimationGroup(*(FadeIn(target) for target in targets))
        )

    def gather(self, sources, target):
        """One animation: copies of ``sources`` slide together onto ``target`` on their chips,
        leave, then ``target`` arrives (a mean or a sum made of them)."""
        return self.one_after_another(*self._ride(sources, [target] * len(sources)), FadeIn(target))

    def send(self, sources, targets):
        """One animation: copies of ``sources`` slide onto ``targets`` (mobjects or points) on
        their chips and leave (the number, then its chip); what they make arrives in a later step."""
        return self.one_after_another(*self._ride(sources, targets))

    def _ride(self, sources, targets) -> tuple[AnimationGroup, AnimationGroup]:
        """Copies of ``sources`` on their chips, in the scene until the play ends: (their moves
        onto ``targets``, their leaving)."""
        copies = [self.travelling(source) for source in sources]
        self.add(*copies)
        self._after_play.append(lambda: self.remove(*copies))
        moves = [copy.animate.move_to(target) for copy, target in zip(copies, targets)]
        return AnimationGroup(*moves), AnimationGroup(*(Conceal(copy) for copy in copies))

    def travelling(self, source: Mobject) -> Mobject:
        """A copy of ``source`` to move across the page, over cells of any colour: it travels
        on a chip of a colour it is readable on (the page's, else white or black), drawn above
        every text, so it never has less than 4.5:1 contrast on its way."""
        copy = source.copy()
        color = source.get_fill_color().to_hex() if hasattr(source, "get_fill_color") else self.look.text
        chip = RoundedRectangle(corner_radius=0.04, width=copy.width + 0.12, height=copy.height + 0.1, stroke_width=0)
        page = self.look.background
        under = (
            page
            if contrast(color, page) >= MIN_CONTRAST
            else "#ffffff"
            if contrast(color, "#ffffff") >= MIN_CONTRAST
            else "#000000"
        )
        chip.set_fill(under, opacity=1).move_to(copy)
        moving = VGroup(chip, copy)
        moving.travelling = True
        return moving

    def sweep(self, highlight, targets, seconds_each: float = 0.4) -> None:
        """Move ``highlight`` over each of ``targets`` in turn (cheap: only the overlay moves)."""
        for target in targets:
            self.play(highlight.over(target), run_time=seconds_each)

    def rest(self, seconds: float | None = None) -> None:
        """Hold the picture still ``seconds`` (default :attr:`hold`) times the pace: still frames
        cost almost nothing to draw."""
        seconds = self.hold if seconds is None else seconds
        if seconds > 0:
            self.wait(seconds * self.pace)


def head_choice_sentence(record, choice: HeadChoice, query: str, key: str, weight: str, baseline: str) -> str:
    """ "head 1 of layer 3: the head that puts most weight above its baseline from “it” on
    “chicken” (0.72; baseline 0.11)": ``query`` and ``key`` named as captions name them,
    ``weight`` and ``baseline`` as written; "of layer L" only for a trained model's layer."""
    layer = f" of layer {record.source.layer}" if record.source.is_model and record.source.layer is not None else ""
    return (
        f"head {choice.head}{layer}: the head that puts most weight above its baseline "
        f"from \u201c{query}\u201d on \u201c{key}\u201d ({weight}; baseline {baseline})"
    )


def ghost_of(*mobjects: Mobject, opacity: float = 1.0, outline: str | None = None) -> VGroup:
    """A dim copy of ``mobjects`` (a stand-in for what is still to come): each part's fill and
    stroke at ``opacity`` times their own, so an outline without fill (a path, an arrow's line)
    stays without fill. Every member is marked ``.ghost`` (tests count no text of its own).

    With ``outline`` (a colour), the stand-in is drawn as outlines instead: no text at all (a
    dim number is neither readable nor absent), every shape unfilled with its edge in
    ``outline`` at full opacity — empty cells where the numbers will come."""
    ghost = VGroup(*(mobject.copy() for mobject in mobjects))
    glyphs = {id(glyph) for part in ghost.get_family() if isinstance(part, SVGMobject) for glyph in part.get_family()}
    for member in ghost.get_family():
        if len(member.points) and hasattr(member, "get_fill_opacity"):
            if outline is None:
                member.set_fill(opacity=member.get_fill_opacity() * opacity, family=False)
                member.set_stroke(opacity=member.get_stroke_opacity() * opacity, family=False)
            elif id(member) in glyphs:
                member.set_fill(opacity=0, family=False).set_stroke(opacity=0, family=False)
            else:
                member.set_fill(opacity=0, family=False)
                if member.get_stroke_width() > 0:
                    member.set_stroke(outline, opacity=1, family=False)
        member.ghost = True
    return ghost


class _no_drawing:
    """While a play's frames are skipped, Manim still draws its static and frozen frames (to
    reuse them in frames it will not write): ``renderer.update_frame`` and
    ``save_static_frame_data`` do nothing meanwhile, so a still costs the building and one
    drawing of the last frame."""

    def __init__(self, renderer) -> None:
        self.renderer = renderer

    def __enter__(self):
        self.renderer.update_frame = lambda *args, **kwargs: None
        self.renderer.save_static_frame_data = lambda *args, **kwargs: None
        return self

    def __exit__(self, *exc) -> None:
        del self.renderer.update_frame, self.renderer.save_static_frame_data


def _layered(mobjects: list) -> list:
    """``mobjects`` in drawing order: shapes, then texts and formulas, then numbers travelling on
    their chips, then highlights (each in the order given)."""
    texts = [m for m in mobjects if isinstance(m, (Text, SVGMobject))]
    travelling = [
        m for m in mobjects if not isinstance(m, (Text, SVGMobject, Highlight)) and _carries_travellers(m)
    ]  # a play's group holds them too
    highlights = [m for m in mobjects if isinstance(m, Highlight)]
    shapes = [m for m in mobjects if not isinstance(m, (Text, SVGMobject, Highlight)) and m not in travelling]
    return shapes + texts + travelling + highlights


def _carries_travellers(mobject) -> bool:
    """Whether ``mobject`` is a travelling chip or a play's group (a plain ``Group``, nested
    for nested animation groups) holding one."""
    if getattr(mobject, "travelling", False):
        return True
    return type(mobject) is Group and any(_carries_travellers(member) for member in mobject.submobjects)


def second_half(t: float) -> float:
    """A rate function that waits for the first half, then eases over the second."""
    return smooth(max(0.0, 2 * t - 1))


def halfway(t: float) -> float:
    """A rate function that jumps from 0 to 1 halfway (a cell's colour changes while no number is on it)."""
    return 0.0 if t < 0.5 else 1.0
