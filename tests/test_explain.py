"""Explaining a prediction (issue 34.1): ``clf.explain(text)`` and ``snowpy explain``.

The contributions must add up to the score the network computed, for every rule of a
weight table and a cloud (a plugin's network: its own tests); names are the words and
n-grams of the text; collisions are reported; the command line gives tables, JSON Lines
and a self-contained HTML page that a real headless browser renders."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

import snowpy
from snowpy.cli import app
from snowpy.explanation import shortened
from snowpy.plugins import list_rules

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "corpora" / "demo" / "train.tsv"
ROWS = [line.split("\t", 1) for line in DEMO.read_text().splitlines() if line]
LABELS, TEXTS = [r[0] for r in ROWS], [r[1] for r in ROWS]
DOCUMENT = "my parcel never arrived and I want a refund"


def _terms_add_up(target, score):
    total = target["bias"]["contribution"] - target["theta"] + sum(
        f["contribution"] for f in target["features"])
    assert abs(total - score) <= 1e-9 * max(1.0, abs(score)), (total, score)
    assert abs(target["residual"]) <= 1e-9 * max(1.0, abs(score))


@pytest.mark.parametrize("rule", sorted(name for name, provided in list_rules().items()
                                         if not provided.record.learner))
def test_the_terms_add_up_to_the_score_for_every_rule(rule):
    clf = snowpy.SnowClassifier(rule, epochs=2, calibrate=None, ngrams=(1, 2)).fit(
        TEXTS, LABELS)
    why = clf.explain(DOCUMENT, top_k=len(clf.classes_), features=None)
    scores = clf.target_scores([DOCUMENT])[0]
    classes = list(clf.classes_)
    assert why["label"] == clf.predict([DOCUMENT])[0]
    assert len(why["targets"]) == len(classes)
    for target in why["targets"]:
        _terms_add_up(target, scores[classes.index(target["label"])])
    best = why["targets"][0]
    assert best["score"] == scores.max()
    assert why["margin"] == pytest.approx(scores.max() - np.sort(scores)[-2])


def test_names_are_the_texts_words_and_ngrams_and_the_list_can_be_cut():
    clf = snowpy.SnowClassifier(epochs=3, calibrate="cv").fit(TEXTS, LABELS)
    why = clf.explain(DOCUMENT, top_k=2, features=None)
    names = {f["name"] for f in why["targets"][0]["features"]}
    assert {"parcel", "arrived", "my parcel", "a refund"} <= names
    assert why["n_features"] == len(why["targets"][0]["features"])
    assert why["probability"] == pytest.approx(clf.predict_proba([DOCUMENT])[0].max())
    cut = shortened(why, 3)["targets"][0]
    full = why["targets"][0]
    assert len(cut["features"]) == 3 and cut["others"]["count"] == len(full["features"]) - 3
    assert cut["others"]["contribution"] == pytest.approx(
        sum(f["contribution"] for f in full["features"][3:]))
    by_size = [abs(f["contribution"]) for f in full["features"]]
    assert by_size == sorted(by_size, reverse=True)


def test_collisions_in_the_hash_are_reported():
    clf = snowpy.SnowClassifier("perceptron", bits=3, epochs=1, calibrate=None,
                                ngrams=(1, 1)).fit(TEXTS, LABELS)
    features = clf.explain("alpha beta gamma delta epsilon zeta eta theta iota kappa",
                           features=None)["targets"][0]["features"]
    assert len(features) <= 8  # ten words in 2**3 ids
    shared = [f for f in features if f["collision"]]
    assert shared and all(" | " in f["name"] and f["shared_with"] for f in shared)


def test_a_cloud_is_explained_member_by_member():
    clf = snowpy.SnowClassifier("winnow+perceptron", epochs=2, calibrate="cv").fit(
        TEXTS, LABELS)
    why = clf.explain(DOCUMENT, top_k=2, features=None)
    assert why["kind"] == "cloud" and [m["rule"] for m in why["members"]] == \
        ["winnow", "perceptron"]
    classes = list(clf.classes_)
    for member, network in zip(why["members"], clf.network_.networks_):
        scores = network.target_scores(clf.rows([DOCUMENT]))[0]
        for target in member["targets"]:
            _terms_add_up(target, scores[classes.index(target["label"])])
        assert len(member["confidence"]) == 2
    assert why["targets"][0]["label"] == clf.predict([DOCUMENT])[0]
    assert why["targets"][0]["score"] == clf.target_scores([DOCUMENT])[0].max()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "m.snowpy"
    snowpy.SnowClassifier(epochs=3).fit(TEXTS, LABELS).save(path)
    return path


def test_the_command_line_explains_arguments_a_file_and_writes_json_lines(model, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["explain", str(model), DOCUMENT, "-k", "1",
                                 "--features", "3"])
    assert result.exit_code == 0, result.output
    assert "(bias)" in result.stdout and "(threshold)" in result.stdout
    assert "more)" in result.stdout
    lines = tmp_path / "docs.txt"
    lines.write_text(f"{DOCUMENT}\nwhere is my invoice\n")
    result = runner.invoke(app, ["explain", str(model), "--file", str(lines), "--json",
                                 "--features", "2"])
    assert result.exit_code == 0, result.output
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [r["text"] for r in rows] == [DOCUMENT, "where is my invoice"]
    assert all(len(t["features"]) <= 2 for r in rows for t in r["targets"])
    loaded = snowpy.load(model)
    assert [r["label"] for r in rows] == loaded.predict([DOCUMENT, "where is my invoice"]
                                                        ).tolist()
    # no documents and no --file: standard input, as predict reads it (it needed --file -)
    piped = runner.invoke(app, ["explain", str(model), "--json", "--features", "2"],
                          input=f"{DOCUMENT}\nwhere is my invoice\n")
    assert piped.exit_code == 0 and piped.stdout == result.stdout
    dash = runner.invoke(app, ["explain", str(model), "-", "--json", "--features", "2"],
                         input=f"{DOCUMENT}\nwhere is my invoice\n")  # (it explained "-")
    assert dash.exit_code == 0 and dash.stdout == result.stdout
    both = runner.invoke(app, ["explain", str(model), DOCUMENT, "--file", str(lines)])
    assert both.exit_code == 1 and "not both" in both.stderr


def test_the_html_colours_a_zero_contribution_neither_way_and_reports_are_0644(model,
                                                                                tmp_path):
    import os
    import re

    runner = CliRunner()
    page = tmp_path / "e.html"
    old = os.umask(0o022)
    try:
        result = runner.invoke(app, ["explain", str(model), DOCUMENT, "--html", str(page),
                                     "--json", "--features", "0", "-k", "3"])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    terms = [f for t in orjson.loads(result.stdout)["targets"] for f in t["features"]]
    assert any(f["contribution"] == 0 for f in terms) and any(f["contribution"] for f in terms)
    cells = re.findall(r'<td class="n muted">\d+</td><td class="n (pos|neg|muted)">'
                       r'([+-][0-9.]+)</td>', page.read_text())
    assert len(cells) == len(terms)
    for (kind, shown), term in zip(cells, terms):
        value = term["contribution"]
        assert kind == ("pos" if value > 0 else "neg" if value < 0 else "muted"), (kind, shown)
    # a report is a file like any other (it was 0600, a model 0644)
    assert page.stat().st_mode & 0o777 == 0o644 == model.stat().st_mode & 0o777


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (apt install chromium)")
def test_the_html_page_renders_in_a_headless_browser(model, tmp_path):
    page = tmp_path / "why.html"
    result = CliRunner().invoke(app, ["explain", str(model), DOCUMENT, "--html", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert "<script" not in text and "http" not in text  # self-contained
    assert 'title="+' in text and 'title="-' in text  # words for and against
    shot = tmp_path / "why.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    "--window-size=1000,800", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    import zlib

    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # the rendered page holds the highlight colours: the green and the red of the CSS
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1000, 800)
    chunks, at = [], 8
    while at < len(data):
        size = int.from_bytes(data[at:at + 4], "big")
        if data[at + 4:at + 8] == b"IDAT":
            chunks.append(data[at + 8:at + 8 + size])
        at += 12 + size
    raw = zlib.decompress(b"".join(chunks))
    assert len(set(raw)) > 50  # not a blank page: text and coloured highlights
