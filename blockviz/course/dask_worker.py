"""What each Dask worker process of a ``LocalCluster`` made by ``blockviz course`` does first
(Dask's ``preload``: it calls :func:`dask_setup`).

A terminal's Ctrl-C reaches every process of the foreground group, the workers too; as blockviz's
own workers (:func:`blockviz.processes.start_worker`) they leave it to the course, which ends
them, instead of each printing a ``KeyboardInterrupt`` traceback.
"""

from __future__ import annotations

import signal
import threading


def dask_setup(worker) -> None:
    """Ignore SIGINT in this worker process (signals can only be set from its main thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
