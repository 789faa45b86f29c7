"""The package installs from a wheel, not only in editable mode: build it, install it into a fresh
virtual environment and run the command from there (issue "Foundation", packaging)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv", "renders", "media", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "blockviz"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    dist = source / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
    )
    return next(dist.glob("blockviz-*.whl"))


def test_the_wheel_holds_every_subpackage(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for package in ("blockviz/cli/", "blockviz/figures/", "blockviz/scenes/", "blockviz/render/", "blockviz/lecture/"):
        assert any(name.startswith(package) for name in names), package
    assert "blockviz/scenes/softmax.py" in names
    assert not any(name.startswith("scenes/") for name in names), "scenes must install as blockviz.scenes only"


@pytest.mark.render
def test_the_wheel_runs_from_a_fresh_virtual_environment(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The dependencies come from this environment's site-packages (no download); blockviz itself
    # only from the wheel: a path listed in a .pth file does not run that folder's own .pth files,
    # so the editable install there stays out of sight.
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)

    # Without this run's PYTHONPATH (a worktree's tests run with it): blockviz from the wheel only.
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}

    def run(*args):
        return subprocess.run(
            [str(venv / "bin" / "blockviz"), *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
            env=environment,
        )

    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import blockviz, blockviz.scenes; print(blockviz.__file__); print(blockviz.scenes.__file__)",
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
    ).stdout.split()
    assert all(path.startswith(purelib) for path in where), where
    version = run("--version")
    assert version.returncode == 0 and "blockviz, version" in version.stdout, version.stderr
    figure = run("figures", "the cat sat", "--figure", "weights", "--format", "png", "-o", "figs")
    assert figure.returncode == 0 and (tmp_path / "figs" / "weights.png").stat().st_size > 1000, figure.stderr
    scene = run("render", "the cat sat", "--scene", "mask", "--format", "png", "--resolution", "160x90", "-o", "video")
    assert scene.returncode == 0 and (tmp_path / "video" / "mask.png").stat().st_size > 500, scene.stderr
