"""The base of every blockviz scene, :class:`RecordScene`: what it shows of its record
(:mod:`~blockviz.scenes.shown`), its title and layout, its steps (animations, a caption, a hold) at
its pace. Captions and speech are in :mod:`~blockviz.scenes.captions`, the animations scenes are
made of in :mod:`~blockviz.scenes.choreography`, the overrides of Manim's engine that make renders
fast in :mod:`~blockviz.scenes.engine`."""

from __future__ import annotations

from collections.abc import Iterable

from manim import (
    LEFT,
    UP,
    Mobject,
    Text,
    Wait,
    config,
    tempconfig,
)
from manim.animation.animation import prepare_animation

from blockviz.scenes import captions
from blockviz.scenes.colour_bar import ColourBars, grids_during, grids_in, layout_top, reserve_band, scales_of
from blockviz.scenes.engine import EngineScene
from blockviz.scenes.kept_plans import choice_key, kept_plan
from blockviz.scenes.layout import fit_between, fit_width, fitting, frame_text_width
from blockviz.scenes.look import FRAME_MARGIN, HOLD, TITLE_SIZE, look
from blockviz.scenes.shown import Shown
from blockviz.scenes.shown_scales import scene_scales
from blockviz.scenes.text import layout_key, text


class RecordScene(Shown, EngineScene):
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
        Seconds the picture holds still after a step without a caption
        (:data:`~blockviz.scenes.look.HOLD`; a step with one holds as long as it takes to read,
        :func:`~blockviz.scenes.captions.reading_hold`): frozen frames, cheap to render.
    shows_one_head
        Whether the scene's pictures are one head's (its title names it): the first caption of
        such a scene says why that head was chosen when ``head="auto"`` chose it. A scene module
        states it as the catalogue literal ``SHOWS_ONE_HEAD`` (:mod:`~blockviz.scenes.catalog`).
    """

    step_time = 1.0
    hold = HOLD
    shows_one_head = False

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
        self.options = {"token": token, "head": head, "theme": theme, "pace": pace, "detail": detail, "to": to}
        self.options["burned_captions"] = burned_captions
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
        self.colour_bars = ColourBars()
        self.layout_choices: dict[str, float] = {}  # noted by a dry build, kept in its plan (note_choice)
        EngineScene.__init__(self, **kwargs)

    plans_scales = True
    """Whether the scene builds itself dry to plan its colour scales, when its first grid asks for
    one (:attr:`~blockviz.scenes.shown_scales.ScalePool.planned`; the dry build does not)."""
    draws_colour_bars = True
    """Whether :meth:`play` brings the colour bars in step with each play (the dry build does not:
    its plan depends on the grids' requests and what is on screen together, not on the bars)."""

    def setup(self) -> None:
        self.camera.background_color = self.look.background
        # the grids of this scene share their colour scales (blockviz.scenes.shown_scales), as
        # planned when the first asks: a scene whose grids ask for none never builds dry
        self.scale_pool = scene_scales(lambda: self.record, self._planned_scales if self.plans_scales else None)

    def _planned_scales(self) -> dict[tuple, float]:
        """The scale of each grid this scene will draw, one per quantity on screen at once: the
        plan kept for this record, scene and options (:func:`~blockviz.scenes.kept_plans.kept_plan`),
        else :meth:`_dry_plan`'s."""
        return kept_plan(type(self), self.record, self.options, layout_key(), self._dry_plan)

    def _dry_plan(self) -> dict[tuple, float]:
        """The plan of a first build of the scene, dry (nothing drawn, no speech), that notes
        which grids are on screen together (:meth:`~blockviz.scenes.shown_scales.ScalePool.plan`)."""
        with tempconfig({"dry_run": True, "verbosity": "WARNING", "progress_bar": "none"}):
            planner = type(self)(record=self.record, skip_animations=True, **self.options)
            planner.plans_scales = False
            planner.draws_colour_bars = False
            planner.play_listeners.clear()
            planner.render()
        return planner.made_plan()

    def made_plan(self) -> dict[tuple, float]:
        """The plan this build made: its grids' scales (:meth:`~blockviz.scenes.shown_scales.ScalePool.plan`)
        and the layout choices it noted (:meth:`note_choice`)."""
        return {**self.scale_pool.plan(), **{choice_key(name): value for name, value in self.layout_choices.items()}}

    def note_choice(self, name: str, value: float) -> None:
        """Note a layout choice ``name`` this build made by trying layouts (a dry build's is kept in
        its plan, :func:`~blockviz.scenes.kept_plans.choice_key`, for the real build: :meth:`planned_choice`)."""
        self.layout_choices[name] = float(value)

    def planned_choice(self, name: str) -> float | None:
        """The layout choice ``name`` the dry build noted (:meth:`note_choice`), kept in this
        build's plan; ``None`` in a dry build, or when the plan has none."""
        planned = self.scale_pool.planned
        return None if planned is None else planned.get(choice_key(name))

    def show_title(self, shown: str) -> Text:
        """Put ``shown`` at the top left of the frame (at once: titles are not animated), where
        the colour bars, top right, never make it move (they may make a long one shrink)."""
        title = fit_width(text(shown, TITLE_SIZE, self.look.text, bold=True), frame_text_width())
        title.to_edge(UP, buff=FRAME_MARGIN).to_edge(LEFT, buff=FRAME_MARGIN)
        self.add(title)
        self.title_mobject = title
        return title

    def place(
        self,
        layout: Mobject,
        title: Mobject,
        bottom_space: float = 0.9,
        grow: float = 1.5,
        *,
        joining: Iterable[Mobject] = (),
        said: Iterable[str] = (),
    ) -> Mobject:
        """Fit ``layout`` (growing it at most ``grow`` ×) between the title and the bottom
        ``bottom_space`` (the caption's band, and any work line; at least
        :func:`~blockviz.scenes.captions.head_caption_band`), centred there. ``joining``: what
        will join the picture later (its grids' colour bars get room under the title too);
        ``said``: the captions shown while it is up: a layout that would reach the tallest of
        them (two lines) is fitted above it instead."""
        top, bottom = self.band(layout, title, bottom_space, joining)
        scale, centre = fitting(layout, top, bottom, grow)
        clear = -config.frame_height / 2 + captions.caption_band(self, said)
        if centre[1] - scale * layout.height / 2 < clear:
            bottom = clear
        return fit_between(layout, top, bottom, grow)

    def band(
        self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, joining: Iterable[Mobject] = ()
    ) -> tuple[float, float]:
        """The heights ``(top, bottom)`` between which :meth:`place` fits ``layout``: under the
        title (and the rows of colour bars its grids, and those ``joining`` it, may need) and
        above ``bottom_space``."""
        reserve_band(title, scales_of(self.record, grids_in([layout, *joining])), self.look)
        return self.free_band(title, bottom_space)

    def free_band(self, title: Mobject, bottom_space: float = 0.9) -> tuple[float, float]:
        """The heights ``(top, bottom)`` of the band under ``title`` as it is now (the rows of
        bars noted so far kept clear) and above ``bottom_space``: :meth:`band` without noting a
        layout's bars. A later :meth:`place` fits its layout in this band or a narrower one."""
        return layout_top(title), -config.frame_height / 2 + max(bottom_space, captions.head_caption_band(self))

    def refit(self, layout: Mobject, title: Mobject, bottom_space: float = 0.9, grow: float = 1.5):
        """An animation growing ``layout`` into the space :meth:`place` would give it now (after
        a secondary part has left): the main object takes the frame."""
        bottom = -config.frame_height / 2 + max(bottom_space, captions.head_caption_band(self))
        scale, centre = fitting(layout, layout_top(title), bottom, grow)
        return layout.animate.scale(scale).move_to(centre)

    def tear_down(self) -> None:
        """The last caption's speech ends before the scene does (:func:`~blockviz.scenes.captions.finish_speech`)."""
        captions.finish_speech(self)

    def say(self, shown: str) -> list:
        """Animations replacing the caption with ``shown``, logged and spoken
        (:func:`~blockviz.scenes.captions.say`); a scene may draw its captions its own way."""
        return captions.say(self, shown)

    def step(
        self, *animations, caption: str | None = None, run_time: float | None = None, hold: float | None = None
    ) -> None:
        """One step: ``animations`` and its ``caption`` together, then the picture holds still:
        ``hold`` seconds, and at least as long as the caption takes to read
        (:func:`~blockviz.scenes.captions.reading_hold`); :attr:`hold` for a step without one.
        A scene that :attr:`shows_one_head` chosen by ``head="auto"`` says why first: its first
        step's animations come with :meth:`~blockviz.scenes.shown.Shown.head_sentence`, then its own caption follows."""
        if caption is not None and self.shows_one_head and not self.head_said:
            self.head_said = True
            said = self.head_sentence()
            if said is not None:
                self.step(*animations, caption=said, run_time=run_time, hold=hold)
                animations = ()
        said = self.say(caption) if caption is not None else []
        run_time = self.step_time if run_time is None else run_time
        if caption is not None:  # never shorter than the caption takes to read
            hold = max(captions.reading_hold(caption, run_time), 0.0 if hold is None else hold)
        if animations or said:
            self.play(*animations, *said, run_time=run_time)
        else:  # a caption-only step without burned captions: the same time, still
            self.wait(run_time * self.pace)
        self.rest(hold)

    def shown_sum(self, parts: list[Text], total: Text) -> None:
        """Note that ``total`` is shown as the sum of ``parts`` (tests check it adds up)."""
        self.sums.append((list(parts), total))

    def play(self, *animations, **kwargs) -> None:
        """The one override of Manim's engine a scene sees: every run time times :attr:`pace`
        (a hold is paced by :meth:`rest`), and a colour bar for every scale on screen once the
        play ends (:class:`~blockviz.scenes.colour_bar.ColourBars`); then the engine's play
        (:meth:`~blockviz.scenes.engine.EngineScene.play`)."""
        prepared = [prepare_animation(animation) for animation in animations]
        still = all(isinstance(animation, Wait) for animation in prepared)
        if not still:
            self.scale_pool.observe(grids_during(self, prepared))
            if self.draws_colour_bars:
                prepared += self.colour_bars.follow(self, prepared)
        if "run_time" in kwargs:
            kwargs["run_time"] *= 1.0 if still else self.pace
        elif not still:
            for animation in prepared:
                animation.run_time *= self.pace
        super().play(*prepared, **kwargs)

    def rest(self, seconds: float | None = None) -> None:
        """Hold the picture still ``seconds`` (default :attr:`hold`) times the pace: still frames
        cost almost nothing to draw."""
        seconds = self.hold if seconds is None else seconds
        if seconds > 0:
            self.wait(seconds * self.pace)
