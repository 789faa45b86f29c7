"""The token-flow explorer: one offline HTML page to select a token and inspect every calculation.

>>> from blockviz import record
>>> page = explore(record("the cat sat"), token="cat", head=1, step="softmax")
>>> page.token, page.head, page.step
(1, 1, 'softmax')
>>> "<script type=\\"application/json\\"" in page.html()
True

Importing this module also gives :class:`~blockviz.block_record.BlockRecord` its
``explore()`` method and a ``_repr_html_`` summary table for notebooks.
"""

from __future__ import annotations

import html
from pathlib import Path

from blockviz.explorer.page import explorer_page, summary_line
from blockviz.explorer.steps import ALL_STEP_NAMES, OVERVIEW, STEP_NAMES, STEPS, select_step, steps_for
from blockviz.ownership import output_file
from blockviz.selection import select_head, select_token
from blockviz.style import theme as theme_named

__all__ = [
    "ALL_STEP_NAMES",
    "OVERVIEW",
    "Explorer",
    "STEPS",
    "STEP_NAMES",
    "explore",
    "record_summary_html",
    "steps_for",
]


class Explorer:
    """The explorer page of one record, opening on one view.

    ``token`` is a word, ``word#k`` or a 0-based position (default: the last word token, not punctuation), ``head``
    a head number (default 0), ``step`` a name of the record's steps (:func:`steps_for`; for
    blockviz's own block :data:`STEP_NAMES`; default the first), and
    ``theme`` "light" or "dark"; ``block``, for a record of several blocks, the block it opens on
    (0-based, default the last). In a notebook it shows itself as a sandboxed iframe.

    The page of blockviz's trained toy models (``--model toy``, and ``--model copy``: every block)
    is a workbench: it runs the model itself for any sentence typed and any parameter edited
    (:func:`blockviz.explorer.payload.is_workbench`).

    Its first view, ``step="overview"``, is a layer × head grid of the selected token's weights
    rows: the record's one block, or with ``attentions`` (a
    :class:`~blockviz.models.recording.ModelAttentions` of the same sentence and model) every
    layer; ``contrast`` (the ModelAttentions of a second sentence, ``contrast_sentence``) puts
    that sentence's rows beside them.

    Raises
    ------
    BlockvizError
        For a token, head, step, theme or block that does not exist; the message lists the choices.
    """

    def __init__(
        self,
        rec,
        token: str | int | None = None,
        head: int | None = None,
        step: str | None = None,
        theme: str = "light",
        attentions=None,
        contrast=None,
        contrast_sentence: str | None = None,
        block: int | None = None,
    ):
        self.record = rec
        self.block = len(rec.blocks) - 1 if block is None else block
        view = rec.block(self.block)  # a block out of range: BlockvizError
        self.attentions, self.contrast, self.contrast_sentence = attentions, contrast, contrast_sentence
        self.token = select_token(view.tokens, token, view.special)
        self.head = select_head(head, view.config.n_heads)
        self.steps = steps_for(view.config, view.source)
        self.step = (
            select_step(step, (OVERVIEW,) + tuple(s.name for s in self.steps))
            if step is not None
            else self.steps[0].name
        )
        self.theme = theme_named(theme).name

    def html(self) -> str:
        """The whole page: one self-contained HTML document."""
        return explorer_page(
            self.record,
            self.token,
            self.head,
            self.step,
            self.theme,
            self.attentions,
            self.contrast,
            self.contrast_sentence,
            self.block,
        )

    def save(self, path: str | Path) -> Path:
        """Write the page to ``path`` atomically (no half-written page under that name) and return it.

        Raises :class:`BlockvizError` if the folder cannot be created or written, or a file blockviz
        did not write stands at ``path`` (:mod:`blockviz.ownership`).
        """
        path = Path(path)
        text = self.html()
        with output_file(path) as temporary:
            temporary.write_text(text, encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        # One static line first, so an untrusted notebook (scripts off) still shows something.
        page = html.escape(self.html(), quote=True)
        line = html.escape(summary_line(self.record))
        return (
            f'<p class="blockviz-summary">{line}</p>'
            f'<iframe srcdoc="{page}" sandbox="allow-scripts allow-downloads" title="blockviz explorer" '
            f'style="width: 100%; height: 760px; border: 1px solid #d1d5db;" loading="lazy"></iframe>'
        )

    def __repr__(self) -> str:
        block = f", block={self.block}" if len(self.record.blocks) > 1 else ""
        return f"Explorer({self.record.sentence!r}, token={self.token}, head={self.head}, step={self.step!r}, theme={self.theme!r}{block})"


def explore(
    rec,
    token: str | int | None = None,
    head: int | None = None,
    step: str | None = None,
    theme: str = "light",
    block: int | None = None,
) -> Explorer:
    """The explorer of record ``rec`` opening on ``token``, ``head``, ``step`` and ``block`` (see :class:`Explorer`)."""
    return Explorer(rec, token=token, head=head, step=step, theme=theme, block=block)


def record_summary_html(rec) -> str:
    """A record as a small HTML table for notebooks: sentence, tokens, config, tensor names and shapes."""
    from blockviz.tokens import display_token

    e = lambda text: html.escape(str(text))  # noqa: E731
    config = ", ".join(f"{key} {value}" for key, value in rec.config.to_dict().items())
    rows = "".join(
        f"<tr><td><code>{e(spec.name)}</code></td><td>{e(tuple(rec.tensors[spec.name].shape))}</td><td>{e(spec.what)}</td></tr>"
        for spec in rec.fields
    )
    tokens = " ".join(f"<code>{e(display_token(token))}</code>" for token in rec.tokens)
    return (
        f"<p><b>BlockRecord</b> “{e(display_token(rec.sentence))}” — {rec.n} tokens: {tokens}</p>"
        f"<p>{e(config)}</p>"
        f"<table><thead><tr><th>tensor</th><th>shape</th><th>what</th></tr></thead><tbody>{rows}</tbody></table>"
    )
