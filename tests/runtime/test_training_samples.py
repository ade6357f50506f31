"""The training samples: linear regression recovers its generating weights (eagerly and
with a converted step, same losses), the MLP classifier fits its synthetic set."""
import os
import re
import runpy

import pytest

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "samples")


def run_sample(name, *argv, capsys):
    """What samples/`name` prints: its main(argv), loaded without running as a script."""
    runpy.run_path(os.path.join(SAMPLES, name))["main"](list(argv))
    return capsys.readouterr().out


def test_linear_regression_recovers_the_weights(capsys):
    out = run_sample("linear_regression.py", capsys=capsys)
    assert "recovered the generating weights: True" in out
    assert "same losses eagerly and converted: True" in out


def test_mlp_classifier_fits_its_training_set(capsys):
    out = run_sample("mlp_classifier.py", capsys=capsys)
    losses = [float(v) for v in re.findall(r"epoch +\d+: loss ([\d.]+)", out)]
    assert len(losses) == 40 and losses[-1] < losses[0] / 2
    assert float(re.search(r"training accuracy: ([\d.]+)", out).group(1)) > 0.9


@pytest.mark.parametrize("name", ["linear_regression.py", "mlp_classifier.py"])
def test_training_samples_dump_their_generated_code(name, capsys):
    out = run_sample(name, "--dump", capsys=capsys)
    assert "def ag__train_step" in out and "GradientTape" in out
