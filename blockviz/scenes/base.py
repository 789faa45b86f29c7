"""The base of every blockviz scene: where its record comes from, its focus token and head, its title and captions."""

from __future__ import annotations

from manim import (
    LEFT,
    UP,
    Group,
    Mobject,
    Scene,
    SVGMobject,
    Text,
    Wait,
    config,
)
from manim.animation.animation import prepare_animation

from blockviz.scenes import drawing_order, skipped_plays
from blockviz.scenes.animation_tree import leaves
from blockviz.scenes.captions import finish_speech, head_caption_band, say
from blockviz.scenes.colour_bar import ColourBars
from blockviz.scenes.grids import Highlight
from blockviz.scenes.layout import fit_between, fit_width, fitting, frame_text_width
from blockviz.scenes.look import FRAME_MARGIN, HOLD, TITLE_SIZE, look
from blockviz.scenes.path_cache import PathCachingCamera
from blockviz.scenes.shown import Shown
from blockviz.scenes.text import text


class RecordScene(Shown, Scene):
    """A Manim scene that animates the real numbers of one :class:`~blockviz.block_record.BlockRecord`.

    ``blockviz render`` builds it with the record, the focus token, the head and the theme.
    Under plain ``manim -ql scenes/<file>.py <Scene>`` it is built without arguments and records
    :data:`~blockviz.scenes.shown.DEFAULT_SENTENCE` (or loads the file named by ``$BLOCKVIZ_RECORD``).

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
    shows_one_head
        Whether the scene's pictures are one head's (its title names it): the first caption of
        such a scene says why that head was chosen when ``head="auto"`` chose it.
    settles_skipped_plays
        Whether a play whose frames are skipped goes straight to its end state
        (:func:`~blockviz.scenes.skipped_plays.settle`) rather than through Manim's play.
    """

    step_time = 1.0
    hold = HOLD
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
        Shown.__init__(self, record, token, head, to, detail)
        self.head_said = False  # whether the first caption said why the head was chosen (or had nothing to say)
        self.voice = voice  # a blockviz.narration.voice.Voice: each caption spoken (render --narrate)
        self.speech_ends = 0.0  # scene time at which the last caption's speech (and its pause) ends
        self.unspeakable: list[str] = []  # characters the voice read as "a token"
        self.look = look(theme)
        self.pace = float(pace)
        self.burned_captions = bool(burned_captions)
        self.caption: Mobject | None = None
        self.title_mobject: Mobject | None = None
        self.captions: list[tuple[float, str]] = []  # (scene time, caption) as each appears: one cue each
        self.sums: list[tuple[list[Text], Text]] = []
        self.after_play: list = []
        self._updaters_in_play: bool | None = None  # whether any mobject has an updater, during a play
        self.play_listeners: list = []  # called with the scene after every play (progress, tests)
        self.colour_bars = ColourBars()
        kwargs.setdefault("camera_class", PathCachingCamera)
        Scene.__init__(self, **kwargs)

    # -- scene furniture --------------------------------------------------------------------------
    def setup(self) -> None:
        self.camera.background_color = self.look.background

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
        ``bottom_space`` (the caption's band, and any work line; at least :func:`~blockviz.scenes.captions.head_caption_band`),
        centred there."""
        bottom = -config.frame_height / 2 + max(bottom_space, head_caption_band(self))
        return fit_between(layout, title.get_bottom()[1] - 0.25, bottom, grow)

    def refit(self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, grow: float = 1.5):
        """An animation growing ``layout`` into the space :meth:`place` would give it now (after
        a secondary part has left): the main object takes the frame."""
        bottom = -config.frame_height / 2 + max(bottom_space, head_caption_band(self))
        scale, centre = fitting(layout, title.get_bottom()[1] - 0.25, bottom, grow)
        return layout.animate.scale(scale).move_to(centre)

    def tear_down(self) -> None:
        """The last caption's speech ends before the scene does (:func:`~blockviz.scenes.captions.finish_speech`)."""
        finish_speech(self)

    def step(
        self, *animations, caption: str | None = None, run_time: float | None = None, hold: float | None = None
    ) -> None:
        """One step: ``animations`` and its ``caption`` together, then the picture holds still.
        A scene that :attr:`shows_one_head` chosen by ``head="auto"`` says why first: its first
        step's animations come with :meth:`head_sentence`, then its own caption follows."""
        if caption is not None and self.shows_one_head and not self.head_said:
            self.head_said = True
            said = self.head_sentence()
            if said is not None:
                self.step(*animations, caption=said, run_time=run_time, hold=hold)
                animations = ()
        said = say(self, caption) if caption is not None else []
        run_time = self.step_time if run_time is None else run_time
        if animations or said:
            self.play(*animations, *said, run_time=run_time)
        else:  # a caption-only step without burned captions: the same time, still
            self.wait(run_time * self.pace)
        self.rest(hold)

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
        while self.after_play:
            self.after_play.pop(0)()
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

    def rest(self, seconds: float | None = None) -> None:
        """Hold the picture still ``seconds`` (default :attr:`hold`) times the pace: still frames
        cost almost nothing to draw."""
        seconds = self.hold if seconds is None else seconds
        if seconds > 0:
            self.wait(seconds * self.pace)


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
