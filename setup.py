"""Package layout: ``blockviz/`` and its subpackages, plus the top-level ``scenes/`` folder
installed as ``blockviz.scenes`` (the repository keeps ``scenes/`` at the top; the wheel nests it).
Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["blockviz", "blockviz.*"]) + ["blockviz.scenes"],
    package_dir={"blockviz.scenes": "scenes"},
)
