"""What a new user hits first (issue 16): splits, headers, labels met late, feedback.

Each test reproduces a defect a new user met and asserts the behaviour that replaced it.
"""

from __future__ import annotations

import json
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from snowpy import SnowClassifier
from snowpy.cli import app
from snowpy.exceptions import CalibrationWarning

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args: str, input: str | None = None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def demo_rows() -> list[tuple[str, str]]:
    rows = [line.split("\t", 1) for line in TRAIN.read_text().splitlines() if line.strip()]
    return [(label, text) for label, text in rows]


@pytest.fixture(scope="module")
def split_archive(tmp_path_factory) -> Path:
    """A 20-Newsgroups-shaped archive: ``corpus-train/<class>/<n>`` and ``corpus-test/``,
    300 training and 100 test documents of the demo corpus."""
    root = tmp_path_factory.mktemp("splits")
    rows = demo_rows()
    for i, (label, text) in enumerate(rows):
        split = "corpus-train" if i < 300 else "corpus-test"
        folder = root / "tree" / split / label
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{i}").write_text(text)
    archive = root / "corpus.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root / "tree", arcname="corpus")
    return archive


def test_a_split_archive_trains_on_train_and_evaluates_on_test(split_archive, tmp_path):
    # item 1: train+test were read together (18,846 documents; 0.94 instead of 0.85)
    model = tmp_path / "m.snowpy"
    result = run("train", split_archive, "-o", model)
    assert result.exit_code == 0, result.output
    assert f"read {split_archive}, split train: 300 documents, 5 classes" in result.stderr
    summary = json.loads(run("train", split_archive, "-o", model, "--json").stdout)
    assert (summary["split"], summary["documents"]) == ("train", 300)
    result = run("evaluate", model, split_archive)
    assert result.exit_code == 0, result.output
    assert f"read {split_archive}, split test: 100 documents" in result.stderr
    report = json.loads(run("evaluate", model, split_archive, "--json").stdout)
    assert report["documents"] == 100
    explicit = run("evaluate", model, split_archive, "--split", "train", "--json")
    assert json.loads(explicit.stdout)["documents"] == 300


def test_a_corpus_with_splits_but_none_preferred_is_refused(tmp_path):
    corpus = tmp_path / "corpus"
    for split in ("train", "dev"):
        for label in ("a", "b"):
            (corpus / split / label).mkdir(parents=True)
            (corpus / split / label / "1.txt").write_text(f"{label} words here")
    model = tmp_path / "m.snowpy"
    assert run("train", corpus, "-o", model, "--epochs", "1", "--calibrate", "none"
               ).exit_code == 0
    result = run("evaluate", model, corpus)
    assert result.exit_code != 0
    assert "has the splits train, dev; choose one with --split" in result.stderr
    assert "Traceback" not in result.output


def test_a_label_met_by_partial_fit_after_calibrating_keeps_probabilities(tmp_path):
    # item 3: "the calibration covers 18 targets, the scores have 20" everywhere after save
    rows = demo_rows()
    texts, labels = [t for _, t in rows], [lab for lab, _ in rows]
    clf = SnowClassifier(calibrate="cv").fit(texts, labels)
    with pytest.warns(CalibrationWarning, match="came after calibrating"):
        clf.partial_fit(["a brand new kind of message", "another new one"],
                        ["novel", "newer"])
    proba = clf.predict_proba(texts[:10])
    assert proba.shape == (10, 7)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    path = tmp_path / "grown.snowpy"
    clf.save(path)
    assert run("predict", path, input="a brand new kind of message\n").exit_code == 0
    result = run("evaluate", path, TRAIN, "--json")
    assert result.exit_code == 0, result.output
    assert np.isfinite(json.loads(result.stdout)["log_loss"])
    # the warning is said once, when the labels arrive, not on every later call
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        clf.partial_fit(["a brand new kind of message"], ["novel"])


@pytest.mark.parametrize("header", ["label,text", "category,message", "v1,v2"])
def test_a_csv_header_is_recognised_not_learned(tmp_path, header):
    # item 4: a `label,text` header became a third class
    rows = demo_rows()[:120]
    lines = [header] + [f'{label},"{text}"' for label, text in rows]
    path = tmp_path / "corpus.csv"
    path.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.snowpy"
    result = run("train", path, "-o", model, "--epochs", "1", "--calibrate", "none")
    assert result.exit_code == 0, result.output
    classes = len({label for label, _ in rows})
    assert f"120 documents, {classes} classes" in result.stderr
    assert "is a header, not a document" in result.stderr


def test_the_command_line_reads_every_layout_python_reads(tmp_path):
    # item 4: columns, header, JSON Lines fields, fastText multi-label, decoding: options
    rows = demo_rows()[:150]
    classes = len({label for label, _ in rows})
    csv_file = tmp_path / "c.csv"
    csv_file.write_text("id,body,kind\n" + "".join(
        f'{i},"{text}",{label}\n' for i, (label, text) in enumerate(rows)))
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("".join(json.dumps({"utterance": t, "intent": lab}) + "\n"
                             for lab, t in rows))
    fasttext = tmp_path / "c.txt"
    fasttext.write_text("".join(f"__label__{lab} __label__any {t}\n" for lab, t in rows))
    latin = tmp_path / "c.tsv"
    latin.write_bytes("".join(f"{lab}\t{t} café\n" for lab, t in rows).encode("latin-1", "replace"))
    model = tmp_path / "m.snowpy"
    fast = ("-o", model, "--epochs", "1", "--calibrate", "none", "--json")
    cases = [
        (csv_file, ["--label-column", "kind", "--text-column", "body"], classes),
        (csv_file, ["--label-column", "2", "--text-column", "1", "--header"], classes),
        (jsonl, ["--label-field", "intent", "--text-field", "utterance"], classes),
        (fasttext, ["--format", "fasttext", "--multilabel"], classes + 1),
        (latin, ["--encoding", "latin-1"], classes),
        (latin, ["--decode", "replace"], classes),
    ]
    for corpus, options, expected in cases:
        result = run("train", corpus, *options, *fast)
        assert result.exit_code == 0, (options, result.output)
        summary = json.loads(result.stdout)
        assert (summary["documents"], summary["classes"]) == (150, expected), options
    # an option that the format does not take is refused, in the command line's words
    result = run("train", latin, "--text-field", "body", *fast)
    assert result.exit_code != 0
    assert "is read as tsv: --text-field does not apply (they go with: --text-field jsonl)" \
        in result.stderr
    result = run("train", latin, *fast)  # latin-1 bytes read as utf-8: named, with the way out
    assert result.exit_code != 0 and "c.tsv:1" in result.stderr
    assert "--encoding latin-1 for 20 Newsgroups, or use --decode replace" in result.stderr


def test_predict_decodes_its_input_as_told(tmp_path):
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--epochs", "2").exit_code == 0
    lines = tmp_path / "lines.txt"
    lines.write_bytes("free entry to win a café prize\n".encode("latin-1"))
    result = run("predict", model, lines)
    assert result.exit_code != 0
    assert "lines.txt:1: byte 23 is not valid utf-8" in result.stderr
    assert "--encoding" in result.stderr and "Traceback" not in result.output
    as_latin = run("predict", model, lines, "--encoding", "latin-1")
    utf8 = tmp_path / "utf8.txt"
    utf8.write_text("free entry to win a café prize\n")
    assert as_latin.exit_code == 0 and as_latin.stdout == run("predict", model, utf8).stdout
    assert run("predict", model, lines, "--decode", "replace").exit_code == 0


def test_error_hints_name_command_line_options(tmp_path):
    # item 15: hints said `errors='replace'`, `multilabel=True` on the command line
    # (a file is recognised as multi-label from its lines; a stream is read as it comes)
    result = run("train", "-", "--format", "fasttext", "-o", tmp_path / "m.snowpy",
                 input="__label__a more words\n__label__a __label__b some words\n")
    assert result.exit_code != 0
    assert "(read with --multilabel)" in result.stderr and "=True" not in result.stderr


def test_a_corpus_a_classifier_cannot_learn_from_is_refused(tmp_path):
    # item 5: a one-class corpus trained and predicted "ham 1.0000" for everything
    one = tmp_path / "one.tsv"
    one.write_text("ham\thello there\nham\tsee you soon\n")
    result = run("train", one, "-o", tmp_path / "m.snowpy")
    assert result.exit_code != 0
    assert "every document has the class 'ham'; a classifier needs at least two" \
        in result.stderr
    with pytest.warns(UserWarning, match="y holds one class only"):  # the library warns
        SnowClassifier(calibrate=None).fit(["hello there", "see you soon"], ["ham", "ham"])
    # a folder of files without class folders: nothing read, and said why
    flat = tmp_path / "flat"
    flat.mkdir()
    for i in range(3):
        (flat / f"{i}.txt").write_text("some words")
    result = run("train", flat, "-o", tmp_path / "m.snowpy")
    assert result.exit_code != 0
    assert "no documents found; 3 file(s) not in a class folder were not read" in result.stderr
    # files beside class folders are said, not lost silently
    for label in ("a", "b"):
        (flat / label).mkdir()
        (flat / label / "1.txt").write_text(f"{label} words")
    result = run("train", flat, "-o", tmp_path / "m.snowpy", "--epochs", "1",
                 "--calibrate", "none")
    assert result.exit_code == 0, result.output
    assert "2 documents, 2 classes" in result.stderr
    assert "note: " in result.stderr and "3 file(s) not in a class folder" in result.stderr


@pytest.fixture(scope="module")
def multilabel_model(tmp_path_factory) -> tuple[Path, Path]:
    """A calibrated multi-label model of the demo corpus: each document keeps its topic,
    billing and account documents are also 'money', feedback documents carry no label."""
    root = tmp_path_factory.mktemp("multi")
    corpus = root / "multi.jsonl"
    lines = []
    for label, text in demo_rows():
        labels = [] if label == "feedback" else [label] + (
            ["money"] if label in ("billing", "account") else [])
        lines.append(json.dumps({"text": text, "label": labels}))
    corpus.write_text("\n".join(lines) + "\n")
    model = root / "multi.snowpy"
    result = run("train", corpus, "-o", model, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["calibrated"]
    return model, corpus


def test_multilabel_predict_honours_top_k_and_never_answers_blank(multilabel_model):
    # item 13: -k was ignored (no probabilities), a document with no label gave a blank line
    model, _ = multilabel_model
    documents = "Thanks, the support team was wonderful and quick\n" \
                "I was charged twice on my card this month, please refund\n"
    for batch in ("1", "100"):
        result = run("predict", model, "-k", "3", "--batch", batch, input=documents)
        assert result.exit_code == 0, result.output
        rows = [line.split("\t") for line in result.stdout.splitlines()]
        assert [len(row) for row in rows] == [3, 3]
        probabilities = [[float(pair.rsplit(" ", 1)[1]) for pair in row] for row in rows]
        assert all(0 <= p <= 1 for row in probabilities for p in row)
        assert all(row == sorted(row, reverse=True) for row in probabilities)
        assert {rows[1][0].split()[0], rows[1][1].split()[0]} == {"billing", "money"}
        plain = run("predict", model, "--batch", batch, input=documents).stdout.splitlines()
        assert plain[0] == "(none)" and set(plain[1].split(",")) == {"billing", "money"}
        answers = [json.loads(line) for line in run(
            "predict", model, "--jsonl", "-k", "2", "--batch", batch, input=documents
        ).stdout.splitlines()]
        assert answers[0]["labels"] == [] and len(answers[1]["top"]) == 2


def test_multilabel_evaluate_reports_calibration(multilabel_model):
    # item 13: evaluate left out log loss and ECE for calibrated multi-label models
    model, corpus = multilabel_model
    report = json.loads(run("evaluate", model, corpus, "--json").stdout)
    assert report["reliability_kind"] == "per label"
    assert 0 < report["log_loss"] < np.log(2) and 0 <= report["ece"] < 0.2
    assert report["subset_accuracy"] > 0.9


def test_evaluating_unknown_labels_explains_first_and_stays_finite(tmp_path):
    # item 6: numpy RuntimeWarnings, `log loss nan`, the explanation after the tables
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--epochs", "3").exit_code == 0
    rows = demo_rows()[:30]
    mixed = tmp_path / "mixed.tsv"
    mixed.write_text("".join(f"{'weird' if i < 10 else label}\t{text}\n"
                             for i, (label, text) in enumerate(rows)))
    unknown = tmp_path / "unknown.tsv"
    unknown.write_text("".join(f"weird\t{text}\n" for _, text in rows))
    for corpus, n_known in ((mixed, 20), (unknown, 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a RuntimeWarning would fail the command
            result = run("evaluate", model, corpus)
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert "nan" not in out and "Warning" not in result.output
        note = out.index("note: 10 of 30" if n_known else "note: 30 of 30")
        assert note < out.index("accuracy") < out.index("precision")
        report = json.loads(run("evaluate", model, corpus, "--json").stdout)
        assert report["documents_with_unknown_labels"] == 30 - n_known
        if n_known:
            assert report["calibrated_documents"] == 20 and np.isfinite(report["log_loss"])
        else:
            assert "log_loss" not in report and "no probability figures" in out


@pytest.fixture(scope="module")
def many_classes(tmp_path_factory) -> tuple[Path, Path]:
    """A 15-class model (past the 12 a terminal shows whole) and its corpus."""
    root = tmp_path_factory.mktemp("many")
    rng = np.random.default_rng(0)
    words = [[f"w{c}x{k}" for k in range(6)] for c in range(15)]
    shared = [f"common{k}" for k in range(30)]
    lines = []
    for i in range(600):
        c = i % 15
        text = " ".join(rng.choice(words[c], 3).tolist() + rng.choice(shared, 8).tolist()
                        + rng.choice(words[(c + 1) % 15], 2 if i % 4 == 0 else 0).tolist())
        lines.append(f"class{c:02d}\t{text}\n")
    corpus = root / "many.tsv"
    corpus.write_text("".join(lines))
    model = root / "many.snowpy"
    assert run("train", corpus, "-o", model, "--epochs", "2").exit_code == 0
    return model, corpus


def test_a_confusion_matrix_of_many_classes_is_folded_and_written(many_classes, tmp_path):
    # item 14: at 20 classes the confusion matrix silently vanished
    model, corpus = many_classes
    whole = tmp_path / "confusion.tsv"
    result = run("evaluate", model, corpus, "--confusion", whole)
    assert result.exit_code == 0, result.output
    assert "largest confusions of 15 classes" in result.stdout
    assert f"the whole 15x15 confusion matrix: {whole}" in result.stdout.replace("\n", "")
    rows = [line.split("\t") for line in whole.read_text().splitlines()]
    assert len(rows) == 16 and all(len(row) == 16 for row in rows)
    report = json.loads(run("evaluate", model, corpus, "--json").stdout)
    assert sum(map(int, (cell for row in rows[1:] for cell in row[1:]))) == 600
    assert [list(map(int, row[1:])) for row in rows[1:]] == report["confusion"]["matrix"]
    plain = run("evaluate", model, corpus).stdout.replace("\n", "")
    assert "--confusion FILE.tsv, --plot DIR" in plain


def test_evaluate_plots_for_the_users_corpus(many_classes, tmp_path):
    # `snowpy evaluate --plot DIR`: a confusion matrix and a reliability diagram
    pytest.importorskip("matplotlib")
    model, corpus = many_classes
    result = run("evaluate", model, corpus, "--plot", tmp_path / "figures")
    assert result.exit_code == 0, result.output
    for name in ("confusion.png", "reliability.png", "coverage.png"):
        figure = tmp_path / "figures" / name
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000
        assert f"wrote {figure}" in result.stderr.replace("\n", "")


def test_without_matplotlib_the_metrics_come_first(many_classes, tmp_path, monkeypatch):
    # item 17: a missing matplotlib aborted the evaluation before the metrics
    import sys

    model, corpus = many_classes
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    result = run("evaluate", model, corpus, "--reliability-diagram", tmp_path / "r.png")
    assert result.exit_code == 1
    assert "accuracy" in result.stdout and "log loss" in result.stdout
    assert "the figures need matplotlib: pip install 'snowpy-learn[plot]'" in result.stderr
    assert not (tmp_path / "r.png").exists()


@pytest.mark.parametrize("rule", ["winnow", "balanced-winnow", "perceptron"])
def test_inspect_and_export_show_the_same_bias(tmp_path, rule):
    # item 7: inspect showed a bias of -1.01 where the export held -0.00998
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--rule", rule, "--epochs", "3",
               "--calibrate", "none").exit_code == 0
    shown = json.loads(run("inspect", model, "--json").stdout)
    assert run("inspect", model, "--export", tmp_path / "links.json").exit_code == 0
    assert run("inspect", model, "--export", tmp_path / "links.txt").exit_code == 0
    exported = json.loads((tmp_path / "links.json").read_text())
    in_text = {line.split()[2]: float(line.split()[4]) for line in
               (tmp_path / "links.txt").read_text().splitlines() if line.startswith("target ")}
    assert exported["bias_strength"] == shown["bias_strength"]
    for target in exported["targets"]:
        assert target["bias"] == shown["bias_weight"][target["label"]]
        assert in_text[target["label"]] == pytest.approx(target["bias"], rel=1e-5)
    assert len({t["bias"] for t in exported["targets"]}) > 1  # learned, not all the default
    # the table says the same number (to its 4 significant digits)
    table = run("inspect", model).stdout.replace("\n", "")
    first = exported["targets"][0]
    assert f"{first['label']} (bias weight {first['bias']:.4g})" in table.replace("  ", " ") \
        or f"bias weight {first['bias']:.4g}" in table


@pytest.mark.corpus
def test_the_repr_of_a_corpus_is_one_line(corpora):
    # item 16: repr(Corpus) dumped the whole corpus
    from snowpy.corpora import load

    spam = load("sms-spam", "train", path=corpora / "sms_spam_collection.tar.gz")
    assert repr(spam) == f"Corpus('sms-spam', split='train', path='{spam.path}', not read yet)"
    n = len(spam)
    assert repr(spam) == f"Corpus('sms-spam', split='train', path='{spam.path}', {n:,} documents)"
    assert n > 4000 and "\n" not in repr(spam) and len(repr(spam)) < 200


def test_training_says_each_phase_and_compiles_nothing(tmp_path, monkeypatch):
    # items 11 and 12: the bar sat at 0/N through featurising and calibrating, and the
    # first run compiled for 11-21 s without a word; the core is compiled at install now
    from snowpy.cli.progress import TrainingReporter

    heard = []

    class Listening(TrainingReporter):
        def phase(self, name, total=None):
            heard.append((name, total))
            super().phase(name, total)

    import sys

    monkeypatch.setattr(sys.modules["snowpy.cli.train"], "TrainingReporter", Listening)
    result = run("train", TRAIN, "-o", tmp_path / "m.snowpy", "--epochs", "2")
    assert result.exit_code == 0, result.output
    # (a clean label<TAB>text file is featurised as it is read: no phase of its own)
    assert heard == [("calibration fold 1 of 3", None),
                     ("calibration fold 2 of 3", None), ("calibration fold 3 of 3", None),
                     ("training", 800), ("calibrating", None), ("saving", None)]
    assert "compiling" not in result.stderr
    heard.clear()  # a corpus the Python reader reads (a folder here) is featurised after
    texts = tmp_path / "texts"
    for label in ("a", "b"):
        (texts / label).mkdir(parents=True)
        for i in range(5):
            (texts / label / f"{i}.txt").write_text(f"{label} words number {i}")
    result = run("train", texts, "-o", tmp_path / "m.snowpy", "--epochs", "2")
    assert result.exit_code == 0, result.output
    assert heard[0] == ("featurising", None) and heard[-1] == ("saving", None)


def test_the_training_rate_is_over_a_recent_window(monkeypatch):
    # item 11: the rate was since t = 0 (28 s of reading and featurising included)
    from snowpy.cli import progress

    clock = iter([0.0, 100.0, 100.5, 101.0, 101.5, 110.0, 112.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    reporter = progress.TrainingReporter.__new__(progress.TrainingReporter)
    reporter.recent = progress.deque()
    # (the reporter's rate, private: what it prints is tested by the command's tests)
    reporter._rate(0)  # t = 0: the start; 100 s of reading and featurising follow
    rates = [reporter._rate(done) for done in (1000, 2000, 3000, 4000)]  # t = 100..101.5
    assert rates[-1] == "2,000 docs/s"  # 3000 in the last 1.5 s; since t = 0: 39 docs/s
    reporter._rate(4200)  # t = 110
    assert reporter._rate(5200) == "500 docs/s"  # t = 112: 1000 in the last 2 s


def test_a_default_classifier_gives_calibrated_probabilities():
    # item 8: SnowClassifier().fit(...).predict_proba(...) raised; the CLI calibrated
    rows = demo_rows()
    texts, labels = [t for _, t in rows], [lab for lab, _ in rows]
    clf = SnowClassifier().fit(texts, labels)
    assert clf.calibrate == "cv" and clf.network_.calibration_ is not None
    proba = clf.predict_proba(texts[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.keep_names is False  # as the command line's default (--no-keep-names)
    # started one example at a time, the same default calibrates progressively
    online = SnowClassifier()
    for text, label in zip(texts, labels):
        online.learn_one(text, label)
    assert online.network_.state_.progressive is not None
    assert abs(sum(online.predict_proba_one(texts[0]).values()) - 1.0) < 1e-9
