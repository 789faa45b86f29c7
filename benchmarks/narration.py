"""How fast the offline voice speaks, and what narration costs a lecture (issue 22's targets:
synthesis ≤ 0.5× the speech's length; a narrated lecture at -q l ≤ 1.5× the un-narrated one).

Run:  .venv/bin/python benchmarks/narration.py [--sentence "the cat sat"] [--lecture]

First every caption the lecture of the sentence shows (read from a render's caption logs in
``--folder``, rendered there first if missing) is spoken by the default Piper voice: seconds of
synthesis over seconds of speech, after the voice has loaded (its load time printed apart).
With ``--lecture``: ``blockviz render SENTENCE --lecture -q l`` from nothing, without and with
``--narrate``, each in a fresh folder and process (wall clock), and their ratio. Prints the load
average. Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = [sys.executable, "-c", "import sys; from blockviz.cli.program import main; sys.exit(main())"]


def lecture_seconds(sentence: str, *extra: str) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        subprocess.run(
            [*PROGRAM, "render", sentence, "--lecture", "-q", "l", "-o", folder, *extra],
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentence", default="the cat sat")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "blockviz-narration-bench")
    parser.add_argument("--lecture", action="store_true")
    args = parser.parse_args()
    logs = sorted((args.folder / ".cache").glob("*.captions.json"))
    if not logs:
        subprocess.run(
            [*PROGRAM, "render", args.sentence, "--lecture", "-q", "l", "-o", str(args.folder)],
            check=True,
            capture_output=True,
        )
        logs = sorted((args.folder / ".cache").glob("*.captions.json"))
    captions = [said for log in logs for _, said in json.loads(log.read_text(encoding="utf-8"))["captions"]]

    from blockviz.narration.speech import spoken
    from blockviz.narration.voice import voice

    started = time.perf_counter()
    speaker = voice()
    print(f"voice loaded in {time.perf_counter() - started:.2f} s")
    started, speech = time.perf_counter(), 0.0
    for caption in captions:
        speech += speaker.say(spoken(caption)).seconds
    synthesis = time.perf_counter() - started
    print(
        f"{len(captions)} captions: {speech:.1f} s of speech in {synthesis:.1f} s: {synthesis / speech:.2f}× (target ≤ 0.5)"
    )
    if args.lecture:
        plain = lecture_seconds(args.sentence)
        narrated = lecture_seconds(args.sentence, "--narrate")
        print(f"lecture -q l: {plain:.1f} s; narrated {narrated:.1f} s: {narrated / plain:.2f}× (target ≤ 1.5)")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
