"""`snowpy predict` (cli/predict.py): decoding its input, batches, pipes, top-k."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from snowpy.cli import app

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "corpora" / "demo" / "train.tsv"
runner = CliRunner()


def run(*args, input: str | None = None, **kwargs):
    return runner.invoke(app, [str(a) for a in args], input=input, **kwargs)


def test_predict_decodes_its_input_as_told(tmp_path):
    model = tmp_path / "m.snowpy"
    assert run("train", TRAIN, "-o", model, "--epochs", "2").exit_code == 0
    lines = tmp_path / "lines.txt"
    lines.write_bytes("free entry to win a café prize\n".encode("latin-1"))
    result = run("predict", model, lines)
    assert result.exit_code != 0
    assert "lines.txt:1: the byte 0xe9 at offset 23 is not valid utf-8" in result.stderr
    assert "--encoding" in result.stderr and "Traceback" not in result.output
    as_latin = run("predict", model, lines, "--encoding", "latin-1")
    utf8 = tmp_path / "utf8.txt"
    utf8.write_text("free entry to win a café prize\n")
    assert as_latin.exit_code == 0 and as_latin.stdout == run("predict", model, utf8).stdout
    assert run("predict", model, lines, "--decode", "replace").exit_code == 0


def test_multilabel_predict_honours_top_k_and_never_answers_blank(multilabel_model):
    # item 13: -k was ignored (no probabilities), a document with no label gave a blank line
    model, _ = multilabel_model
    documents = "Thank you so much, great support, very happy\n" \
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


def test_a_multilabel_set_is_every_label_of_probability_one_half_or_more(multilabel_model):
    # the set predict answers and the probabilities printed beside it are one answer:
    # every label at 1/2 or more is in the set, none below (Platt's free intercept put 8
    # of the demo test file's 120 sets at odds with their probabilities); explain's
    # runner-up is the best label left out of the set
    model, _ = multilabel_model
    test = ROOT / "corpora" / "demo" / "test.tsv"
    texts = "".join(line.split("\t", 1)[1] + "\n" for line in test.read_text().splitlines())
    answers = [json.loads(line) for line in run(
        "predict", model, "-", "--jsonl", "-k", "9",
        input=texts).stdout.splitlines()]
    assert len(answers) == 120
    for answer in answers:
        above = [t["label"] for t in answer["top"] if t["probability"] >= 0.5]
        assert sorted(answer["labels"]) == sorted(above), answer
    assert sum(bool(a["labels"]) for a in answers) > 90  # (not sets empty by chance)
    for text in texts.splitlines()[:40]:
        explained = json.loads(run("explain", model, text, "--json").stdout)
        assert explained["runner_up"] not in explained["label"]


def test_predict_reads_its_input_with_the_bound(quick_model, monkeypatch):
    monkeypatch.setenv("SNOWPY_MAX_DOCUMENT_BYTES", "1000")
    result = run("predict", quick_model, input="fine\n" + "x" * 5000)
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "standard input:2: a line of more than 1,000 bytes" in result.stderr


def test_predict_refuses_a_batch_below_one(fresh_model):
    result = runner.invoke(app, ["predict", str(fresh_model), "--batch", "-1"], input="hello\n")
    assert result.exit_code == 1 and "at least 1" in result.output


def test_a_bad_option_value_is_one_line_and_status_1_before_anything_is_read(fresh_model,
                                                                               tmp_path):
    # status 2 in a usage box, as click says it, where the docs promise 1; --abstain was
    # checked after the model and the corpus were read
    corpus = tmp_path / "missing.tsv"  # (never read: the option is refused first)
    for args, line in (
            (["train", corpus, "-o", tmp_path / "m.snowpy", "--epochs", "abc"],
             "snowpy: error: invalid value for '--epochs': 'abc' is not a valid int. "
             "(snowpy train --help)"),
            (["predict", fresh_model, "-k", "0"],
             "snowpy: error: invalid value for --top-k: must be at least 1 "
             "(snowpy predict --help)"),
            (["evaluate", fresh_model, corpus, "--abstain", "2"],
             "snowpy: error: invalid value for --abstain: must be a probability margin from "
             "0 to 1 (snowpy evaluate --help)")):
        result = runner.invoke(app, [str(a) for a in args], input="")
        assert result.exit_code == 1 and result.output.strip() == line, result.output
    missing = runner.invoke(app, ["train", str(corpus)])  # (a usage error: status 2)
    assert missing.exit_code == 2 and "Missing option" in missing.output


def test_predict_answers_a_pipe_when_its_input_pauses(tmp_path):
    """32.8: reading a pipe, snowpy predict waited to fill a batch of 10,000 lines; it
    now answers what it has when nothing more is ready, and keeps batching a flow."""
    import subprocess
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    model = tmp_path / "m.snowpy"
    subprocess.run([sys.executable, "-m", "snowpy", "train", str(demo), "-o", str(model),
                    "--epochs", "1", "-q"], check=True, timeout=120)
    process = subprocess.Popen([sys.executable, "-m", "snowpy", "predict", str(model)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        process.stdin.write("my parcel never arrived\n")
        process.stdin.flush()
        # before: no answer until 10,000 lines or the end of the input (a test that
        # would hang, so it waits 60 s at most)
        import select

        answered, _, _ = select.select([process.stdout], [], [], 60)
        assert answered, "no answer while the input pauses"
        assert process.stdout.readline().strip()
        rest, _ = process.communicate("".join(f"line {i}\n" for i in range(25_000)),
                                      timeout=120)
    finally:
        process.kill()
    assert len(rest.splitlines()) == 25_000 and process.returncode == 0


def test_an_error_comes_alone(tmp_path):
    # --workers 0 printed a 4-line warning and "training on None" before its error; an
    # empty standard input printed the stream's table header before its error
    demo = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"
    result = runner.invoke(app, ["train", str(demo), "-o", str(tmp_path / "m.snowpy"),
                                 "--workers", "0"])
    assert result.exit_code == 1
    assert result.output.strip() == "snowpy: error: --workers must be at least 1, got 0"
    result = runner.invoke(app, ["train", "-", "-o", str(tmp_path / "m.snowpy")], input="")
    assert result.exit_code == 1
    assert result.output.strip() == "snowpy: error: -: no documents found"


def test_a_few_words_do_not_earn_a_probability_of_one(multilabel_model):
    # `echo "wheat and corn exports rose" | snowpy predict reuters.snowpy -k 8` printed
    # grain, wheat and corn at 1.0000: a short document's strong words score far beyond
    # the held-out scores each label's sigmoid was fitted on, and the sigmoid went on
    # rising; a label's probability stays within Platt's smoothed targets now,
    # (N+ + 1) / (N+ + 2) of its N+ held-out positives (Reuters: 0.9977, 0.9953, 0.9945).
    # On this model 41 probabilities of the demo test file printed 1.0000.
    model, _ = multilabel_model
    test = ROOT / "corpora" / "demo" / "test.tsv"
    texts = "".join(line.split("\t", 1)[1] + "\n" for line in test.read_text().splitlines())
    printed = run("predict", model, "-k", "9", input=texts).stdout
    assert len(printed.splitlines()) == 120 and "1.0000" not in printed
    answer = run("predict", model, "-k", "2", input="charged twice for my invoice\n")
    assert answer.stdout == f"money {161 / 162:.4f}\tbilling {81 / 82:.4f}\n"  # 0.9938, 0.9878
