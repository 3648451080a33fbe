"""What a plain ``pip install`` gives a user, checked by installing the wheel (issue 16.9:
``snowpy experiment learning-curve`` failed because the demo corpus was not installed)."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                    "-q", str(ROOT), "-w", str(out)], check=True, capture_output=True,
                   timeout=300)
    return next(out.glob("snowpy_learn-*.whl"))  # (the distribution: snowpy-learn)


def test_the_wheel_carries_the_demo_corpus(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for split in ("train", "test"):
        assert f"snowpy_learn-0.1.0.data/data/share/snowpy/demo/{split}.tsv" in names
    assert not any(name.startswith("tests/") for name in names)


def test_an_installed_snowpy_runs_the_learning_curve_on_its_demo(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    # The run-time dependencies come from the interpreter running the suite. Inside a venv,
    # system_site_packages would point at the base Python instead, which lacks them (issue
    # 32.9); a .pth line adds our site-packages after the new venv's own.
    site_dir = subprocess.run([str(python), "-c", "import sysconfig; "
                               "print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
    ours = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    Path(site_dir, "_suite_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True,
                   timeout=300)
    out = tmp_path / "out"
    result = subprocess.run(
        [str(python), "-c", "import snowpy, sys; from snowpy.corpora import demo_path; "
         "print(snowpy.__file__); print(demo_path('train'))"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    module, demo = result.stdout.split()
    assert str(env_dir) in module and str(env_dir) in demo  # the installed copy, not ours
    result = subprocess.run([str(env_dir / "bin" / "snowpy"), "experiment", "learning-curve",
                             "-o", str(out), "--figure", "none"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600,
                            env={"PATH": "/usr/bin:/bin", "SNOWPY_DATA": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "the demo corpus" in result.stderr
    assert len((out / "learning-curve.csv").read_text().splitlines()) > 3


def test_plugins_depend_on_the_distribution_snowpy_installs_as():
    # docs/plugins.md's minimal pyproject.toml depended on "snowpy>=0.1": an unrelated
    # PyPI project (snowflake-connector, pyodbc, statsmodels came with it)
    import re
    from importlib.metadata import distribution

    assert distribution("snowpy-learn").metadata["Name"] == "snowpy-learn"
    texts = [(ROOT / "docs" / "plugins.md").read_text()] + [
        path.read_text() for path in (ROOT / "plugins").glob("*/pyproject.toml")]
    named = [re.findall(r'"(snowpy[\w-]*)\s*[<>=~!]', text) for text in texts]
    assert all(names == ["snowpy-learn"] for names in named), named
    readme = (ROOT / "README.md").read_text()
    assert "is not published on PyPI" in readme and "pip install snowpy-learn" not in readme
