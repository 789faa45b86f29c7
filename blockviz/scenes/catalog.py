"""The scene catalogue: every renderable scene by name, in teaching order, found in the scene
modules themselves — there is no list to edit.

``blockviz render --list`` prints it and ``blockviz render --scene NAME`` looks names up here,
without importing Manim: each module of ``blockviz/scenes/`` is read as source (parsed, not
imported), and one that states ``NAME`` is a scene. It states, as module-level literals:

* ``NAME`` — the scene's name for ``blockviz render --scene`` and its render's file name
  (lowercase words joined by ``-``);
* ``ORDER`` — its place in ``--scene all`` and in the lecture, lower first: the one ordering;
* ``DESCRIPTION`` — one line for ``blockviz render --list``;
* ``CHAPTER`` — its chapter's title in the lecture;
* ``CAPTION`` — one sentence for the lecture's ``.srt`` while it plays;
* ``<FACT>_CHAPTER``, ``<FACT>_CAPTION`` (optional, for a fact of
  :data:`blockviz.scenes.wording.FACTS`: ``ENCODER_CAPTION``, ``RMSNORM_CHAPTER``…) — the title or
  caption for a record whose architecture has that fact, when the scene shows something else
  then; chapter and captions may hold ``{phrase}`` placeholders of
  :data:`blockviz.scenes.wording.PHRASES` (``{norm}``), filled in from the record
  (:meth:`SceneEntry.title_for`, :meth:`SceneEntry.caption_for`);
* ``LECTURE_ONLY`` (optional, ``False``) — left out of ``--scene all`` (the title card);
* ``TOKEN_AXIS`` (optional, ``False``) — the scene draws the sentence's tokens (a grid's token
  axis, the title card's chips): the focus and the key followed are always labelled in full;
* ``SHOWS_ONE_HEAD`` (optional, ``False``) — its pictures are one head's, so its first caption
  says why ``--head auto`` chose that head; its class states
  ``shows_one_head = SHOWS_ONE_HEAD`` (:attr:`~blockviz.scenes.base.RecordScene.shows_one_head`);
* ``NEEDS`` (optional) — what the scene needs beyond a block, named as in
  :data:`blockviz.record_needs.NEEDS` (``"unembedding"``: the prediction; ``"training"``: a model
  folder ``blockviz train`` wrote; ``"stack"``: a record of several blocks; ``"lens-scene"``: several
  blocks with an unembedding; ``"key-sources"``: a toy model's stack, whose last block splits its
  scores by where the keys came from); ``--scene all`` and the lecture leave it out of a record
  without it, and ``--scene NAME`` refuses that record in one line (:class:`SceneRefused`);

and defines one class deriving from :class:`~blockviz.scenes.base.RecordScene`: the scene.

To add a scene: write its module here and its thin file ``scenes/<module>.py`` at the top of
the repository (for ``manim -ql``); the scene tests then find it, build it and check it
(``docs/writing-a-scene.md``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

from blockviz.errors import BlockvizError, did_you_mean
from blockviz.scenes.wording import FACTS, PHRASES, Wording, placeholders

PACKAGE = "blockviz.scenes"
FOLDER = Path(__file__).resolve().parent
REQUIRED = ("NAME", "ORDER", "DESCRIPTION", "CHAPTER", "CAPTION")
"""What every scene module states; the variants (``ENCODER_CAPTION``…), ``LECTURE_ONLY``, ``NEEDS``,
``TOKEN_AXIS`` and ``SHOWS_ONE_HEAD`` are optional."""
VARIANTS = tuple(f"{fact}_{kind}" for fact in FACTS for kind in ("CHAPTER", "CAPTION"))
"""The optional variants of ``CHAPTER`` and ``CAPTION``, one of each per fact of the architecture."""
TYPES = {
    "NAME": str,
    "ORDER": (int, float),
    "DESCRIPTION": str,
    "CHAPTER": str,
    "CAPTION": str,
    **dict.fromkeys(VARIANTS, str),
    "LECTURE_ONLY": bool,
    "NEEDS": str,
    "TOKEN_AXIS": bool,
    "SHOWS_ONE_HEAD": bool,
}
BASE = "RecordScene"
VALID_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
STATEMENT_LINES = 12
"""The most lines a stated literal or a ``class`` line may span."""
_STATEMENT = re.compile(rf"^(?:{'|'.join(TYPES)})\b", re.MULTILINE)
_CLASS = re.compile(r"^class\b", re.MULTILINE)


class SceneRefused(BlockvizError):
    """A scene asked for by name cannot show the record (it lacks what the scene ``NEEDS``): the
    CLI's usage error on ``--scene`` (exit 2)."""


@dataclass(frozen=True)
class SceneEntry:
    """One catalogued scene, as its module states it (see the module docstring): ``name`` (the
    CLI's), where its class lives (``module``, ``class_name``), its teaching ``order``, its
    ``description`` (``--list``), ``title`` (its lecture chapter) and ``caption`` (the lecture's
    ``.srt``) as written for blockviz's toy block, their ``variants`` for other architectures
    (``(name, text)``: ``("ENCODER_CAPTION", …)``), whether it is ``lecture_only``, what it
    ``needs`` beyond a block (:data:`blockviz.record_needs.NEEDS`), whether it draws a
    ``token_axis`` and whether it ``shows_one_head``. A record's own title and caption:
    :meth:`title_for`, :meth:`caption_for`."""

    name: str
    module: str  # e.g. "blockviz.scenes.softmax"
    class_name: str  # e.g. "Softmax"
    order: float
    description: str
    title: str
    caption: str
    variants: tuple[tuple[str, str], ...] = ()
    lecture_only: bool = False
    needs: str | None = None
    token_axis: bool = False
    shows_one_head: bool = False

    @property
    def encoder_caption(self) -> str | None:
        """The caption stated for a record without a causal mask (``ENCODER_CAPTION``), if any."""
        return dict(self.variants).get("ENCODER_CAPTION")

    def missing_for(self, rec) -> str | None:
        """Why this scene cannot show ``rec`` (it lacks what the scene ``needs``), or ``None``."""
        from blockviz.record_needs import missing

        return missing(self.needs, rec)

    def scene_class(self):
        """The Manim scene class (imports Manim and the scene's module)."""
        return getattr(importlib.import_module(self.module), self.class_name)

    def caption_for(self, wording: Wording) -> str:
        """The caption for a record worded by ``wording`` (``Wording.of(rec)``, :mod:`blockviz.scenes.wording`):
        the variant of its architecture's first fact this scene states one for, else ``caption``,
        its placeholders filled in."""
        return wording.pick(self.caption, self._variants_of("CAPTION"))

    def title_for(self, wording: Wording) -> str:
        """The chapter title for a record worded by ``wording``, as :meth:`caption_for` picks a caption."""
        return wording.pick(self.title, self._variants_of("CHAPTER"))

    def _variants_of(self, kind: str) -> dict[str, str]:
        """Fact → text of the variants of ``kind`` (``"CAPTION"`` or ``"CHAPTER"``)."""
        return {name[: -len(kind) - 1]: said for name, said in self.variants if name.endswith(f"_{kind}")}


def scene_entry(path: Path) -> SceneEntry | None:
    """The entry of the scene module at ``path`` (``None`` if it states no ``NAME``: not a scene),
    read from its source without importing it.

    Only the statements that matter are parsed — the module-level assignments of
    :data:`TYPES`' names and the ``class`` lines, found at the start of a line — so reading the
    catalogue costs milliseconds, not a parse of every scene.

    Raises
    ------
    ValueError
        If the module states ``NAME`` but lacks one of :data:`REQUIRED`, states one that is not a
        literal of its type, has a malformed ``NAME``, a placeholder outside
        :data:`~blockviz.scenes.wording.PHRASES` in its chapter or captions, or does not define
        exactly one class deriving from ``RecordScene``.
    """
    source = path.read_text(encoding="utf-8")
    stated = _stated_literals(source, path)
    if "NAME" not in stated:
        return None
    missing = [name for name in REQUIRED if name not in stated]
    if missing:
        raise ValueError(
            f"{path.name} states NAME but not {', '.join(missing)}: every scene module does (see blockviz.scenes.catalog)"
        )
    from blockviz.record_needs import NEEDS

    if stated.get("NEEDS", next(iter(NEEDS))) not in NEEDS:
        raise ValueError(f"{path.name}: NEEDS {stated['NEEDS']!r} must be one of {', '.join(NEEDS)}")
    if not VALID_NAME.fullmatch(stated["NAME"]) or stated["NAME"] == "all":
        raise ValueError(f"{path.name}: NAME {stated['NAME']!r} must be lowercase words joined by '-' (and not 'all')")
    for key in ("CHAPTER", "CAPTION", *VARIANTS):
        try:
            unknown = [f"{{{name}}}" for name in placeholders(stated.get(key, "")) if name not in PHRASES]
        except ValueError:
            unknown = ["an unmatched brace"]
        if unknown:
            raise ValueError(
                f"{path.name}: {key} holds {unknown[0]}: placeholders are {', '.join(PHRASES)} (blockviz.scenes.wording)"
            )
    classes = [
        node.name for node in _statements(source, _CLASS) if any(_base_name(base) == BASE for base in node.bases)
    ]
    if len(classes) != 1:
        raise ValueError(
            f"{path.name} defines {len(classes)} classes deriving from {BASE} ({', '.join(classes) or 'none'}): a scene module defines exactly one"
        )
    return SceneEntry(
        name=stated["NAME"],
        module=f"{PACKAGE}.{path.stem}",
        class_name=classes[0],
        order=stated["ORDER"],
        description=stated["DESCRIPTION"],
        title=stated["CHAPTER"],
        caption=stated["CAPTION"],
        variants=tuple((key, stated[key]) for key in VARIANTS if key in stated),
        lecture_only=stated.get("LECTURE_ONLY", False),
        needs=stated.get("NEEDS"),
        token_axis=stated.get("TOKEN_AXIS", False),
        shows_one_head=stated.get("SHOWS_ONE_HEAD", False),
    )


def discover(folder: Path) -> tuple[SceneEntry, ...]:
    """Every scene module in ``folder`` (see :func:`scene_entry`), in teaching order.

    Raises
    ------
    ValueError
        For a malformed scene module, or two scenes with one ``NAME`` or one ``ORDER``.
    """
    found = sorted(
        (entry for path in sorted(folder.glob("*.py")) if (entry := scene_entry(path)) is not None),
        key=lambda entry: entry.order,
    )
    for field in ("name", "order"):
        values = [getattr(entry, field) for entry in found]
        twice = sorted({value for value in values if values.count(value) > 1})
        if twice:
            modules = [entry.module.rpartition(".")[2] for entry in found if getattr(entry, field) in twice]
            raise ValueError(
                f"scene modules {', '.join(modules)} state the same {field.upper()} {twice[0]!r}: each scene has its own"
            )
    return tuple(found)


@functools.cache
def _catalogue() -> tuple[SceneEntry, ...]:
    return discover(FOLDER)


def entries() -> list[SceneEntry]:
    """Every catalogued scene in teaching order (by ``ORDER``), the lecture-only title card first."""
    return list(_catalogue())


def lookup(names_asked: list[str] | tuple[str, ...]) -> list[SceneEntry]:
    """The entries named (``"all"`` = every scene but the lecture-only ones), in teaching order,
    without repeats.

    Raises
    ------
    BlockvizError
        For a name not in the catalogue.
    """
    by_name = {entry.name: entry for entry in entries()}
    chosen: set[str] = set()
    for name in names_asked:
        if name == "all":
            chosen.update(entry.name for entry in entries() if not entry.lecture_only)
        elif name in by_name:
            chosen.add(name)
        else:
            raise BlockvizError(
                f"unknown scene {name!r}: {did_you_mean(name, [*by_name, 'all'])}choose from {', '.join(by_name)} or all (see blockviz render --list)"
            )
    return [entry for entry in entries() if entry.name in chosen]


def for_record(chosen: list[SceneEntry], rec, asked: tuple[str, ...] | list[str] = ("all",)) -> list[SceneEntry]:
    """The ``chosen`` entries that can show ``rec``: a scene that lacks what it needs is left out
    when it came with ``all`` (or the lecture), and refused when it was ``asked`` for by name.

    Raises
    ------
    SceneRefused
        For a scene asked for by name that cannot show ``rec`` (one line, with the fix).
    """
    kept = []
    for entry in chosen:
        reason = entry.missing_for(rec)
        if reason is None:
            kept.append(entry)
        elif entry.name in asked:
            raise SceneRefused(f"scene {entry.name!r} cannot be drawn: {reason}")
    return kept


def _stated_literals(source: str, path: Path) -> dict:
    """The module-level assignments of :data:`TYPES`' names in ``source``, as their literal values."""
    stated = {}
    for node in _statements(source, _STATEMENT):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id in TYPES:
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    value = None
                kind = TYPES[target.id]
                if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                    expected = "a number" if target.id == "ORDER" else f"a {kind.__name__} literal"
                    raise ValueError(f"{path.name}: {target.id} must be {expected}")
                stated[target.id] = value
    return stated


def _statements(source: str, start: re.Pattern) -> list[ast.stmt]:
    """The module-level statements of ``source`` that begin where ``start`` matches a line's start:
    each parsed alone, from its first line to the shortest run of at most
    :data:`STATEMENT_LINES` lines that parses (a class only by its ``class …:`` line, its body
    replaced by ``...``). A match that never parses (a line of a docstring) is passed over."""
    lines = source.splitlines()
    found = []
    for match in start.finditer(source):
        first = source.count("\n", 0, match.start())
        for last in range(first + 1, min(first + STATEMENT_LINES, len(lines)) + 1):
            chunk = "\n".join(lines[first:last])
            try:
                statement = ast.parse(chunk + " ..." if chunk.rstrip().endswith(":") else chunk).body
            except SyntaxError:
                continue
            found.extend(statement[:1])
            break
    return found


def _base_name(base: ast.expr) -> str:
    """``RecordScene`` for a base written ``RecordScene`` or ``base.RecordScene``."""
    return base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
