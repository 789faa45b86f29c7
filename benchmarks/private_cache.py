"""Benchmarks keep blockviz's cache to themselves.

Records, colour-scale plans and speech made while timing go to a temporary folder, removed at the
end, unless ``BLOCKVIZ_CACHE_DIR`` already names one: a benchmark never writes the user's
``~/.cache/blockviz``, and what it finds there never makes a run "warm" by accident.
(``models.py`` is the exception: it times loading from blockviz's own cache.)
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def use_private_cache() -> str:
    """Point ``BLOCKVIZ_CACHE_DIR`` (for this process and the programs it starts) at a new
    temporary folder unless it is set; return the folder in use."""
    if not os.environ.get("BLOCKVIZ_CACHE_DIR"):
        folder = tempfile.mkdtemp(prefix="blockviz-benchmark-cache-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["BLOCKVIZ_CACHE_DIR"] = folder
    return os.environ["BLOCKVIZ_CACHE_DIR"]
