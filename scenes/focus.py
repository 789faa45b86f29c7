"""Deprecated: the token and head selector is :mod:`blockviz.selection`.

Kept only because ``blockviz/render/run.py`` still imports these two names; delete this file
once it imports :func:`blockviz.selection.select_token` / :func:`~blockviz.selection.select_head`.
"""

from blockviz.selection import select_head as check_head
from blockviz.selection import select_token as focus_index

__all__ = ["check_head", "focus_index"]
