"""The AROW plugin: snowpy's conformance suite, hand-checked steps, and the command line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.plugins import list_rules
from snowpy.testing import conformance_checks

DEMO = Path(__file__).resolve().parents[3] / "corpora" / "demo"


def test_registered_through_its_entry_point():
    provided = list_rules()["arow"]
    assert provided.plugin == "arow" and provided.distribution.startswith("snowpy-arow")


@pytest.mark.parametrize("check", conformance_checks(), ids=lambda check: check.__name__)
def test_conformance(check):
    check("arow")


def test_one_step_by_hand():
    """Margin 0 < 1 on x = (1, 1), variances 1, r = 1: v = 2, beta = 1/3, alpha = 1/3."""
    net = snowpy.Network("arow", bias=False, average=False, r=1.0, links="all")
    net.partial_fit(sp.csr_matrix(np.array([[1.0, 1.0]])), [["f"]])
    planes = net.engine_.store.planes_of(np.arange(2), 0)
    np.testing.assert_allclose(planes[:, 0], [1 / 3, 1 / 3])  # means
    np.testing.assert_allclose(planes[:, 1], [2 / 3, 2 / 3])  # variances 1 - 1/3


def test_learns_the_demo_corpus():
    from snowpy.corpora import read_tsv

    train = list(read_tsv(DEMO / "train.tsv"))
    test = list(read_tsv(DEMO / "test.tsv"))
    clf = snowpy.SnowClassifier("arow", thickness=1.0).fit([d.text for d in train],
                                                           [d.label for d in train])
    assert clf.score([d.text for d in test], [d.label for d in test]) >= 0.9


def test_trains_from_the_command_line(tmp_path):
    script = shutil.which("snowpy")
    if script is None:
        pytest.skip("the snowpy script is not installed")
    model = tmp_path / "arow.snowpy"
    result = subprocess.run([script, "train", str(DEMO / "train.tsv"), "-o", str(model),
                             "--rule", "arow", "--r", "0.5", "--json"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert '"rule": "arow"' in result.stdout and '"r": 0.5' in result.stdout
    evaluated = subprocess.run([script, "evaluate", str(model), str(DEMO / "test.tsv"),
                                "--json"], capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0 and '"accuracy"' in evaluated.stdout
