"""A failed write is one line naming the path and the reason, exit 1, and leaves no partial file
(issue 13: a full disk, a read-only file system, no permission, a name too long).

Full disks are tiny tmpfs mounts and read-only folders are read-only bind mounts: both need
`mount` (root, as here and in CI); where it is refused the test is skipped with the reason.
Permission tests need a user that permissions apply to (not root) and are skipped as root.
Every earlier file must come out byte-identical, and no hidden ``.part`` file, ``media-*`` or
probe file may remain.
"""

import errno
import os
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from blockviz.cli import main
from blockviz.errors import BlockvizError
from blockviz.files import atomic_path, output_error, temporary_folder, writable_folder
from blockviz.ownership import MANIFEST, remember
from blockviz.tensorfile import os_error_inside

SCENE = ["--scene", "mask", "--format", "png", "--resolution", "160x90"]
EARLIER = b"an earlier output, to be kept exactly\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def one_line_error(result, *words):
    """The result is exit 1 with one line, "Error: …", holding every word (case-insensitive)."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and (
        result.exception is None or isinstance(result.exception, SystemExit)
    ), (result.output, result.exception)
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, result.output
    for word in words:
        assert str(word).lower() in errors[0].lower(), result.output
    return errors[0]


def leftovers(folder):
    """Temporary files and folders of blockviz's under ``folder``."""
    return sorted(
        str(path)
        for path in folder.rglob("*")
        if path.name.endswith(".part") or path.name.startswith(("media-", "record-", ".blockviz-probe-"))
    )


def mount_or_skip(*args):
    if shutil.which("mount") is None:
        pytest.skip("no `mount` command here: file-system faults need a tmpfs or a bind mount")
    result = subprocess.run(["mount", *map(str, args)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here ({result.stderr.strip() or 'mount failed'}): file-system faults need root")


@pytest.fixture
def tiny_disk(tmp_path, request):
    """A 256 KiB tmpfs, unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount_or_skip("-t", "tmpfs", "-o", "size=256k", "tmpfs", disk)
    request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(disk)], check=False))
    return disk


def fill(disk, leave=0):
    """Fill ``disk``'s file system until about ``leave`` bytes are free (0: until a write fails)."""
    stats = os.statvfs(disk)
    wanted = max(0, stats.f_bavail * stats.f_frsize - leave)
    with open(disk / "filler", "wb", buffering=0) as handle:
        try:
            while wanted > 0:
                wanted -= handle.write(b"\0" * min(wanted, 4096))
            while leave == 0:
                handle.write(b"\0" * 4096)
        except OSError as error:
            assert error.errno == errno.ENOSPC


@pytest.fixture
def read_only(tmp_path, request):
    """``read_only(folder)``: a read-only view of ``folder`` (a bind mount), unmounted afterwards."""

    def view(folder):
        target = tmp_path / f"read-only-{folder.name}"
        target.mkdir()
        mount_or_skip("--bind", folder, target)
        request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(target)], check=False))
        mount_or_skip("-o", "remount,bind,ro", target)
        return target

    return view


# -- a full disk ---------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".safetensors"])
def test_record_save_on_a_full_disk(tiny_disk, suffix):
    # safetensors fails inside Rust (a SafetensorError naming "os error 28"), JSON in Python.
    earlier = tiny_disk / f"r{suffix}"
    earlier.write_bytes(EARLIER)
    remember([earlier])  # an earlier output of blockviz's (a foreign file would be refused before any writing)
    fill(tiny_disk)
    one_line_error(invoke("record", "the cat sat", "--save", earlier), repr(str(earlier)), "no space left on device")
    assert earlier.read_bytes() == EARLIER
    assert leftovers(tiny_disk) == []


def test_figures_on_a_full_disk(tiny_disk):
    out = tiny_disk / "figures"
    out.mkdir()
    (out / "weights.svg").write_bytes(EARLIER)
    remember([out / "weights.svg"])
    fill(tiny_disk)
    one_line_error(
        invoke("figures", "the cat sat", "--figure", "weights", "--format", "svg,png", "-o", out),
        str(out),
        "no space left on device",
    )
    assert (out / "weights.svg").read_bytes() == EARLIER
    assert leftovers(tiny_disk) == []


@pytest.mark.parametrize("leave", [0, 5 * 1024], ids=["full", "nearly full"])
def test_render_on_a_full_disk(tiny_disk, leave):
    # Nearly full: room for the media folder and the cache key, not for the 160x90 PNG (about 7 KB).
    out = tiny_disk / "renders"
    out.mkdir()
    (out / "mask.png").write_bytes(EARLIER)
    remember([out / "mask.png"])
    fill(tiny_disk, leave)
    one_line_error(
        invoke("render", "the cat sat", *SCENE, "-o", out), repr(str(out / "mask.png")), "no space left on device"
    )
    assert (out / "mask.png").read_bytes() == EARLIER
    assert leftovers(tiny_disk) == []


def test_a_lecture_on_a_full_disk(tiny_disk, tmp_path):
    from support_lecture import BLUE, RED, make_clip

    from blockviz.lecture.join import LecturePart, write_lecture

    parts = [
        LecturePart(name, f"Scene {name}", "One colour.", make_clip(tmp_path / f"{name}.mp4", 30, colour))
        for name, colour in (("a", RED), ("b", BLUE))
    ]
    earlier = tiny_disk / "lecture.mp4"
    earlier.write_bytes(EARLIER)
    remember([earlier])
    fill(tiny_disk)
    with pytest.raises(BlockvizError, match="No space left on device") as raised:
        write_lecture(parts, earlier)
    assert repr(str(earlier)) in str(raised.value)
    assert earlier.read_bytes() == EARLIER and sorted(path.name for path in tiny_disk.iterdir()) == [
        MANIFEST,
        "filler",
        "lecture.mp4",
    ]


# -- a read-only file system ----------------------------------------------------------------------


@pytest.fixture
def earlier_outputs(tmp_path):
    """A folder holding earlier outputs of every command (any bytes: only their survival counts)."""
    folder = tmp_path / "outputs"
    (folder / ".cache").mkdir(parents=True)
    for name in ("r.json", "weights.svg", "explorer.html", "mask.png", "mask.mp4"):
        (folder / name).write_bytes(EARLIER)
        remember([folder / name])
    return folder


COMMANDS_INTO = {
    "record --save": lambda out: ["record", "the cat sat", "--save", out / "r.json"],
    "figures": lambda out: ["figures", "the cat sat", "--figure", "weights", "--format", "svg", "-o", out / "figures"],
    "explore": lambda out: ["explore", "the cat sat", "-o", out / "explorer.html"],
    "render --force": lambda out: ["render", "the cat sat", *SCENE, "--force", "-o", out],
    "render --lecture": lambda out: ["render", "the cat sat", "--lecture", "--resolution", "160x90", "-o", out],
}


@pytest.mark.parametrize("command", COMMANDS_INTO)
def test_a_read_only_file_system_is_named(earlier_outputs, read_only, command):
    view = read_only(earlier_outputs)
    before = {path.name: path.read_bytes() for path in earlier_outputs.iterdir() if path.is_file()}  # the manifest too
    result = invoke(*COMMANDS_INTO[command](view))
    line = one_line_error(result, str(view), "read-only file system")
    assert "permission denied" not in line.lower()
    assert "resid_post" not in result.output  # record refuses before printing anything
    assert {path.name: path.read_bytes() for path in earlier_outputs.iterdir() if path.is_file()} == before
    assert leftovers(earlier_outputs) == []


def test_a_read_only_folder_is_permission_denied_for_a_user(earlier_outputs):
    if os.geteuid() == 0:
        pytest.skip("running as root, which permissions do not stop: the read-only mount tests cover this")
    earlier_outputs.chmod(0o555)
    try:
        for command in COMMANDS_INTO.values():
            one_line_error(invoke(*command(earlier_outputs)), str(earlier_outputs), "permission denied")
    finally:
        earlier_outputs.chmod(0o755)
    assert all(path.read_bytes() == EARLIER for path in earlier_outputs.iterdir() if path.is_file())


# -- a name too long -----------------------------------------------------------------------------


def test_a_name_too_long_is_refused_before_any_work(tmp_path):
    long = "x" * 300
    result = invoke("record", "the cat sat", "--save", tmp_path / f"{long}.json")
    one_line_error(result, "file name too long", "choose a shorter name")
    assert "resid_post" not in result.output
    one_line_error(invoke("explore", "the cat sat", "-o", tmp_path / f"{long}.html"), "file name too long")
    one_line_error(
        invoke("figures", "the cat sat", "--figure", "weights", "--format", "svg", "-o", tmp_path / long),
        "file name too long",
    )
    assert list(tmp_path.iterdir()) == []


def test_a_name_near_the_limit_still_gets_a_temporary_file(tmp_path):
    # The hidden temporary name adds about 15 bytes; it is shortened, the final name is kept.
    name = "é" * 120 + ".json"  # 245 bytes in UTF-8
    result = invoke("record", "a", "--model", "seeded", "--save", tmp_path / name)
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in tmp_path.iterdir()) == [MANIFEST, name]


# -- the pieces ----------------------------------------------------------------------------------


def test_an_os_error_inside_atomic_path_names_the_final_path(tmp_path):
    (tmp_path / "a.txt").write_text("earlier")
    with pytest.raises(BlockvizError) as raised:
        with atomic_path(tmp_path / "a.txt") as temporary:
            temporary.write_text("half")
            raise OSError(errno.EROFS, "whatever the library said")
    assert (
        str(raised.value)
        == f"cannot write {str(tmp_path / 'a.txt')!r} (Read-only file system): choose a writable folder"
    )
    assert [path.name for path in tmp_path.iterdir()] == ["a.txt"] and (tmp_path / "a.txt").read_text() == "earlier"


def test_other_errors_inside_atomic_path_pass_through_and_remove_the_temporary(tmp_path):
    for error in (KeyboardInterrupt(), ValueError("a bug")):
        with pytest.raises(type(error)):
            with atomic_path(tmp_path / "a.txt") as temporary:
                temporary.write_text("half")
                raise error
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_folder_is_removed_whatever_happens(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with temporary_folder(tmp_path / ".cache", "media-") as media:
            (media / "partial.mp4").write_bytes(b"x")
            raise KeyboardInterrupt
    assert list((tmp_path / ".cache").iterdir()) == []


def test_messages_name_the_reason_and_the_fix():
    assert (
        str(output_error("a.json", OSError(errno.ENAMETOOLONG, "")))
        == "cannot write 'a.json' (File name too long): choose a shorter name"
    )
    assert (
        str(output_error("out", OSError(errno.EACCES, "x"), "write to folder"))
        == "cannot write to folder 'out' (Permission denied): choose a writable folder"
    )


@pytest.mark.parametrize(
    "message, number",
    [
        ("Error while serializing: I/O error: No space left on device (os error 28)", errno.ENOSPC),
        (
            'Error while serializing: IoError(Os { code: 30, kind: ReadOnlyFilesystem, message: "Read-only file system" })',
            errno.EROFS,
        ),
        ("Error while serializing: something else", None),
    ],
)
def test_safetensors_errors_give_their_errno(message, number):
    error = os_error_inside(Exception(message))
    assert error.errno == number
    if number is None:
        assert str(error) == message


def test_writable_folder_tries_rather_than_asks(tmp_path, read_only):
    folder = tmp_path / "folder"
    folder.mkdir()
    view = read_only(folder)
    with pytest.raises(BlockvizError, match=r"\(Read-only file system\)"):
        writable_folder(view)


# -- two runs at once ------------------------------------------------------------------------------


@pytest.mark.render
def test_two_renders_into_one_folder_at_once_both_succeed(tmp_path):
    # Each run's temporaries are its own (registered by process), so neither removes the other's.
    import sys

    from PIL import Image

    program = os.path.join(os.path.dirname(sys.executable), "blockviz")
    out = tmp_path / "out"
    runs = [
        subprocess.Popen(
            [program, "render", "the cat sat", *SCENE, "--force", "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    for run in runs:
        _, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, stderr.decode()
    with Image.open(out / "mask.png") as image:
        image.load()
        assert image.size == (160, 90)
    assert leftovers(out) == []
