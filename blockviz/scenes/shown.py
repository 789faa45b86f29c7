"""What a scene shows of its record, without Manim: the record, the focus token, the head and the
key it was chosen for, the tokens as headers name them, the colour scales, the rows worked in detail.

:class:`Shown` is plain data: a test builds it from a record and reads its answers without
importing Manim; :class:`~blockviz.scenes.base.RecordScene` derives from it, so a scene reads
``self.focus``, ``self.h``, ``self.token_names``, ``self.limit(name)``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from blockviz.head_choice import HeadChoice, choose_head
from blockviz.scenes.look import MAX_SLOTS
from blockviz.scenes.token_axis import KeptName, token_face, visible_slots
from blockviz.scenes.wording import Wording
from blockviz.selection import select_token
from blockviz.style import format_number
from blockviz.tokens import display_token, marked_unknown, unknown_tokens

DEFAULT_SENTENCE = "the cat sat"
RECORD_ENVIRONMENT_VARIABLE = "BLOCKVIZ_RECORD"
"""Path of a saved record for a scene run by the plain ``manim`` command (else the default sentence)."""


class Shown:
    """What a scene shows of ``record``: its focus (``token``: a word, ``word#k`` or a 0-based
    position; the last word token by default), its head (``head``: a number, 0 by default, or
    ``"auto"``; ``to``: the key it is chosen for and always labelled, ``render --to``) and how
    many query rows are worked step by step (``detail``). Without a record, :data:`DEFAULT_SENTENCE`
    is recorded on first use (or the file named by ``$BLOCKVIZ_RECORD`` is loaded).

    Attributes
    ----------
    top_keys
        How many of the keys the focus attends to most an elided token axis always draws.
    quoted
        ``(number as a caption writes it, its source in the record)`` for every number a
        caption quoted (:meth:`quote`): tests read each back from the record.
    """

    top_keys = 3

    def __init__(
        self,
        record=None,
        token: str | int | None = None,
        head: int | str | None = 0,
        to: str | int | None = None,
        detail: int = 1,
    ) -> None:
        self._record = record
        self.token = token
        self.head = head
        self.to = to
        self.detail = int(detail)
        self._head_choice: HeadChoice | None = None
        self.quoted: list[tuple[str, tuple]] = []

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
        """The record's tokens as grid headers draw them (:func:`~blockviz.scenes.token_axis.token_face`:
        punctuation quoted, “.”); the focus and its :meth:`kept_keys` as
        :class:`~blockviz.scenes.token_axis.KeptName`, which headers never cut. A word a toy
        model read as its unknown token is marked so, "zebra (<unk>)"
        (:func:`blockviz.tokens.marked_unknown`); a kept one's column header draws "zebra" where
        the whole name is wider than its column (:attr:`~blockviz.scenes.token_axis.KeptName.short`)."""
        kept = {self.focus, *self.kept_keys()}
        faces = [token_face(token) for token in self.record.tokens]
        names = [
            marked_unknown(face, self.record.source.vocabulary) if unknown else face
            for face, unknown in zip(faces, self.unknown_tokens)
        ]
        return [KeptName(name, short=face) if i in kept else name for i, (name, face) in enumerate(zip(names, faces))]

    @property
    def unknown_tokens(self) -> list[bool]:
        """Which of the record's tokens a toy model read as its unknown token
        (:func:`blockviz.tokens.unknown_tokens`)."""
        return unknown_tokens(list(self.record.tokens), self.record.source.vocabulary)

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

    def numbers_to_read(self) -> str:
        """The numbers a presenter reads out beside this scene's captions (its slides' notes),
        read from the record: for a scene that shows one head's weights (``shows_weights``), the
        weights the focus puts on the keys it attends to most in that head, largest first, e.g.
        "head 0: “sat” puts 0.93 on “the”, 0.05 on “cat”, 0.02 on “sat”"; "" for other scenes (the
        mask's and the scores' show no weights)."""
        if not getattr(self, "shows_weights", False):
            return ""
        f = self.focus
        weights = self.record.weights[self.h, f]
        said = ", ".join(
            f"{format_number(weights[key].item(), 2)} on {quoted_token(self.record.tokens[key])}"
            for key in self.top_keys_of(f)
        )
        return f"head {self.h}: {quoted_token(self.record.tokens[f])} puts {said}" if said else ""

    def token_slots(self, limit: int = MAX_SLOTS, heads: Sequence[int] = ()) -> list[int | None]:
        """The token positions an elided token axis draws (``None`` = ⋯): the focus, the keys it
        attends to most in the shown head and the first token, never hidden (with ``heads``, the
        key it attends to most in each of them comes before the shown head's second and third, as
        room allows); then the focus's neighbours (:func:`~blockviz.scenes.token_axis.visible_slots`)."""
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


def head_choice_sentence(record, choice: HeadChoice, query: str, key: str, weight: str, baseline: str) -> str:
    """ "head 1 of layer 3: the head that puts most weight above its baseline from “it” on
    “chicken” (0.72; baseline 0.11)": ``query`` and ``key`` named as captions name them,
    ``weight`` and ``baseline`` as written; "of layer L" only for a trained model's layer."""
    layer = f" of layer {record.source.layer}" if record.source.is_model and record.source.layer is not None else ""
    return (
        f"head {choice.head}{layer}: the head that puts most weight above its baseline "
        f"from \u201c{query}\u201d on \u201c{key}\u201d ({weight}; baseline {baseline})"
    )


def quoted_token(token: str) -> str:
    """``token`` as notes and captions quote it: “sat”."""
    return f"\u201c{display_token(token)}\u201d"
