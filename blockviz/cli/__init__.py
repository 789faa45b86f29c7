"""The ``blockviz`` command line: a click group of verb subcommands (:mod:`blockviz.cli.group`),
run as a program by :mod:`blockviz.cli.program`.

Kept empty of imports: every ``blockviz.cli.*`` module (the program's entry point first) imports
this package before itself. ``blockviz.cli.main`` is the group (``CliRunner().invoke(main, …)``).
"""

from __future__ import annotations


def __getattr__(name: str):
    if name == "main":
        from blockviz.cli.group import main

        return main
    raise AttributeError(f"module 'blockviz.cli' has no attribute {name!r}")
