"""`blockviz train` with its defaults makes the model blockviz ships, byte for byte (one
training run: about 30 s of CPU)."""

from click.testing import CliRunner

from blockviz.cli import main
from blockviz.toy import PACKAGED
from blockviz.toy.folder import REPRODUCIBLE_FILES


def test_training_with_the_defaults_reproduces_the_shipped_model(tmp_path):
    result = CliRunner().invoke(main, ["train", "-o", str(tmp_path / "model")])
    assert result.exit_code == 0, result.output
    for name in REPRODUCIBLE_FILES:
        assert (tmp_path / "model" / name).read_bytes() == (PACKAGED / name).read_bytes(), name
