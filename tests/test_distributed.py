"""Training and prediction on a real Dask LocalCluster of two worker processes: the fit,
a worker killed in the middle of a round, a client killed and resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import distributed

from snowpy import SnowClassifier, load  # noqa: E402
from snowpy.corpora import demo_path, read  # noqa: E402
from snowpy.distributed import Reading, evaluate, fit, predict  # noqa: E402

pytestmark = pytest.mark.slow
DEMO = str(demo_path("train"))


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as connected:
        yield connected


def _weights(classifier):
    net = classifier.network_
    links = net.engine_.effective_links().tocoo()
    features = np.concatenate([[-1], net.feature_ids_])[links.row]
    keys = (features + 1) * len(net.classes_) + links.col
    order = np.argsort(keys)
    return keys[order], links.data[order]


def _model_arrays(path):
    import io
    import zipfile

    with zipfile.ZipFile(path) as archive:
        return {name: np.load(io.BytesIO(archive.read(name)))
                for name in archive.namelist() if name.endswith(".npy")}


def test_idf_counts_every_shard_before_any_shard_learns(client):
    """The shards' document frequencies are added up and each shard weighed by the sum:
    the frequencies of a fit in memory, however many shards; one shard learns the
    network that fit learns."""
    options = dict(rule="passive-aggressive", values="log", idf=True, norm="l2", bias=0.1,
                   epochs=3, calibrate=None)
    texts, labels = zip(*[(d.text, d.label) for d in read(DEMO)])
    one = SnowClassifier(**options).fit(list(texts), list(labels))
    expected = one.featurizer_.frequencies_.to_arrays()
    for shards in (3, 1):
        model = fit(SnowClassifier(**options), DEMO, cluster=client,
                    reading=Reading(shards=shards))
        assert model.featurizer_.frequencies_.documents == 400
        for found, wanted in zip(model.featurizer_.frequencies_.to_arrays(), expected):
            np.testing.assert_array_equal(found, wanted)
        # (and by label: the relevance factors of relevance=0.25, the defaults')
        np.testing.assert_allclose(model.featurizer_.frequencies_.factors_of(expected[0]),
                                   one.featurizer_.frequencies_.factors_of(expected[0]),
                                   rtol=1e-13)
    keys, weights = _weights(model)
    one_keys, one_weights = _weights(one)
    np.testing.assert_array_equal(keys, one_keys)
    np.testing.assert_allclose(weights, one_weights, rtol=1e-6, atol=1e-9)


def test_one_shard_calibrates_as_one_process_and_every_shard_count_draws_its_folds(
        client, tmp_path):
    """One fold scheme for every source: the cluster's calibration folds are the folds one
    process draws (by rank of the examples' keys, however many shards hold them), and
    each fold's network learns on rows weighed by the fold's own document frequencies, as
    in one process: one shard gives one process's model, probabilities and all."""
    from snowpy.distributed import training as run_module
    from snowpy.network.driver import folds

    texts, labels = zip(*[(d.text, d.label) for d in read(DEMO)])
    # a label of one document: the fold holding it scores it as the lowest score it saw
    rare = tmp_path / "rare.tsv"
    rare.write_text(Path(DEMO).read_text() + "rare\tan utterly singular request\n")
    # (Winnow: a fold's network starts from its own folds' active features, SNoW's rho)
    for corpus, options in ((DEMO, {"epochs": 4}), (DEMO, {"epochs": 4, "rule": "winnow"}),
                            (str(rare), {"epochs": 4})):  # (cv: 3 folds)
        documents = [(d.text, d.label) for d in read(corpus)]
        one = SnowClassifier(**options).fit(*map(list, zip(*documents)))
        model = fit(SnowClassifier(**options), corpus, cluster=client,
                    reading=Reading(shards=1))
        np.testing.assert_array_equal(model.predict_proba(list(texts)),
                                      one.predict_proba(list(texts)))
        # the same arrays, rows and all (a file's rows lie in the order of their features'
        # ids); an averaging sum of -0.0 in one may be 0.0 in the other (equal numbers)
        found, wanted = (_model_arrays(m.save(tmp_path / f"{i}.snowpy"))
                         for i, m in enumerate((model, one)))
        assert found.keys() == wanted.keys()
        for name in wanted:
            assert found[name].dtype == wanted[name].dtype, name
            np.testing.assert_array_equal(found[name], wanted[name], err_msg=name)
    from snowpy.text.keys import document_keys

    expected = np.empty(len(texts), np.int8)
    for fold, held in enumerate(folds(document_keys(list(texts), list(labels)), 3, 0)):
        expected[held] = fold
    drawn = []
    real = run_module._Run._fold

    def spy(run, k):
        real(run, k)
        drawn.append(np.concatenate(run.client.gather(
            [run.client.submit(lambda part: part.fold, part) for part in run.data])))

    run_module._Run._fold = spy
    try:
        fit(SnowClassifier(epochs=1), DEMO, cluster=client, reading=Reading(shards=3))
    finally:
        run_module._Run._fold = real
    by_text = dict(zip(texts, expected))  # (the shards hold the lines in another order)
    shard_texts = [t for part in range(3) for t in _shard_texts(part, 3)]
    assert sorted(drawn[0].tolist()) == sorted(expected.tolist())
    assert [by_text[t] for t in shard_texts] == drawn[0].tolist()


def _shard_texts(index, count):
    from snowpy.distributed.shards import plan_shards, read_shard

    return read_shard(plan_shards(DEMO, count)[index]).texts


def _corpus(path, n=3000):
    """A corpus whose rounds take a moment: three topics of made-up words."""
    rng = np.random.default_rng(7)
    words = [[f"{topic}{w}" for w in range(300)] + [f"common{w}" for w in range(300)]
             for topic in ("alpha", "beta", "gamma")]
    with open(path, "w") as out:
        for i in range(n):
            topic = i % 3
            text = " ".join(rng.choice(words[topic], size=40))
            out.write(f"t{topic}\t{text}\n")
    return str(path)


def test_a_shard_hands_its_round_back_in_the_order_its_rows_were_met(client, tmp_path):
    """A feature a round saw with no link (a row the file leaves out) is met again by a
    shard in the next round: its new row comes after the round's start's rows, as the
    mixing reads a shard's network, though a model file lists rows by their features'
    ids (two shards, two rounds, links where updates touch)."""
    rng = np.random.default_rng(8)
    words = np.array([f"w{i}x" for i in range(600)])
    corpus = tmp_path / "words.tsv"
    corpus.write_text("".join(
        f"{label}\t{' '.join(words[rng.integers(0, 600, 10)])} {label}word\n"
        for label in rng.choice(["alpha", "beta", "gamma"], 600)))
    model = fit(SnowClassifier(rule="perceptron", links="touched", discard=None, relevance=0,
                               ngrams=1, epochs=2, calibrate=None, early_stop=False),
                str(corpus), cluster=client, reading=Reading(shards=2))
    assert [r["round"] for r in model.distributed_["rounds"]] == [1, 2]
    assert model.predict(["w1x alphaword", "w2x gammaword"]).tolist() == ["alpha", "gamma"]


def test_fit_predict_and_evaluate_on_a_local_cluster(client, tmp_path):
    texts = [d.text for d in read(str(demo_path("test")))]
    labels = [d.label for d in read(str(demo_path("test")))]
    model = fit(SnowClassifier(epochs=4), DEMO, cluster=client, reading=Reading(shards=4))
    one = SnowClassifier(epochs=4).fit(*zip(*[(d.text, d.label) for d in read(DEMO)]))
    # (four shards mixed: 0.908 against one process's 0.933 at the defaults)
    assert model.score(texts, labels) >= one.score(texts, labels) - 0.03
    proba = model.predict_proba(texts)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert (model.classes_[proba.argmax(axis=1)] == model.predict(texts)).all()
    rounds = model.distributed_["rounds"]
    assert [r["round"] for r in rounds] == [1, 2, 3, 4]
    assert all(r["models"] == 4 for r in rounds)  # the network and three calibration folds
    # each round's slowest shard's epoch is timed on its worker, and is part of the round
    assert all(0 < r["slowest"] < r["seconds"] for r in rounds)
    # the model is an ordinary model file
    model.save(tmp_path / "m.snowpy")
    again = load(tmp_path / "m.snowpy")
    assert again.predict(texts).tolist() == model.predict(texts).tolist()
    # prediction and evaluation on the workers
    result = evaluate(tmp_path / "m.snowpy", str(demo_path("test")), cluster=client,
                      output=tmp_path / "out")
    assert result["documents"] == 120
    assert result["accuracy"] == pytest.approx(model.score(texts, labels))
    lines = (tmp_path / "plain.txt")
    lines.write_text("\n".join(texts * 20) + "\n")  # several blocks of 64 KB
    done = predict(tmp_path / "m.snowpy", str(lines), tmp_path / "pred", cluster=client,
                   reading=Reading(shards=3, format="lines"))
    assert done["documents"] == 2400
    written = [line.split("\t")[0] for part in sorted((tmp_path / "pred").glob("part-*.tsv"))
               for line in part.read_text().splitlines()]
    assert written == model.predict(texts).tolist() * 20


def test_a_worker_killed_mid_round_changes_nothing(client, tmp_path):
    """A worker holding a copy of the network a round starts from (each worker that holds
    shards makes its own) is killed as the round begins: its copy and its shards are
    computed again from their lineage (the rounds before them and the corpus), and the
    model is the one a run without the kill learns. (Before, the first network was
    scattered data, which has no lineage: the round failed with 'already forgotten'
    whenever Dask's memory manager had left one copy of it.)"""
    corpus = _corpus(tmp_path / "c.tsv", 2000)
    settings = {"epochs": 3, "calibrate": None}
    clean = fit(SnowClassifier(**settings), corpus, cluster=client, reading=Reading(shards=4))
    killed = []

    def kill_the_holders(round, connected):
        if round == 1 and not killed:
            pids = connected.run(os.getpid)
            killed.extend(sorted({worker for key, workers in connected.who_has().items()
                                  if key.startswith("snowpy-finish-network-r0-")
                                  for worker in workers})[:1])
            for worker in killed:
                os.kill(pids[worker], signal.SIGKILL)

    faulty = fit(SnowClassifier(**settings), corpus, cluster=client, reading=Reading(shards=4),
                 on_submit=kill_the_holders)
    assert killed
    for a, b in zip(_weights(clean), _weights(faulty)):
        np.testing.assert_array_equal(a, b)
    client.wait_for_workers(2, timeout=60)


def test_resume_after_the_client_was_killed(client, tmp_path):
    corpus = _corpus(tmp_path / "c.tsv", 6000)
    common = ["--rule", "winnow", "--epochs", "6", "--no-early-stop", "--calibrate", "none",
              "--shards", "4", "--workers", "2", "-q"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    checkpoint = tmp_path / "ck"
    command = [sys.executable, "-m", "snowpy", "train", corpus, "-o",
               str(tmp_path / "resumed.snowpy"), "--checkpoint", str(checkpoint), *common]
    process = subprocess.Popen(command, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            progress = checkpoint / "progress.json"
            if progress.is_file() and b'"rounds": 2' in progress.read_bytes():
                break
            time.sleep(0.02)
        assert process.poll() is None, process.stderr.read().decode()
        os.killpg(process.pid, signal.SIGKILL)  # the client and its local cluster
        process.wait(30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert not (tmp_path / "resumed.snowpy").exists()
    finished = subprocess.run(command + ["--resume"], env=env, capture_output=True, text=True,
                              timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert not checkpoint.exists()  # removed once the model is written
    whole = subprocess.run([sys.executable, "-m", "snowpy", "train", corpus, "-o",
                            str(tmp_path / "whole.snowpy"), *common], env=env,
                           capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    resumed, uninterrupted = load(tmp_path / "resumed.snowpy"), load(tmp_path / "whole.snowpy")
    assert resumed.network_.mistakes_ == uninterrupted.network_.mistakes_
    for a, b in zip(_weights(resumed), _weights(uninterrupted)):
        np.testing.assert_array_equal(a, b)


def test_command_line_errors_are_clear(tmp_path):
    from typer.testing import CliRunner

    from snowpy.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["train", DEMO, "-o", str(tmp_path / "m.snowpy"),
                                 "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 1 and "give one of them" in result.output
    result = runner.invoke(app, ["train", DEMO, "-o", str(tmp_path / "m.snowpy"),
                                 "--resume"])
    assert result.exit_code == 1 and "go with --workers" in result.output
    result = runner.invoke(app, ["train", DEMO, "-o", str(tmp_path / "m.snowpy"),
                                 "--workers", "1", "--resume"])
    assert result.exit_code == 1 and "holds no checkpoint" in result.output
    result = runner.invoke(app, ["train", DEMO, "-o", str(tmp_path / "m.snowpy"),
                                 "--workers", "1", "--average-over", "some"])
    assert result.exit_code == 1 and "--average-over changed or all" in result.output
    result = runner.invoke(app, ["train", "-", "-o", str(tmp_path / "m.snowpy"),
                                 "--workers", "1"])
    assert result.exit_code == 1 and "not standard input" in result.output
    result = runner.invoke(app, ["evaluate", DEMO, DEMO, "--workers", "0"])
    assert result.exit_code == 1 and "--workers must be at least 1, got 0" in result.output


def test_the_cluster_is_a_client_an_address_or_a_number_of_workers():
    with pytest.raises(Exception, match="at least 1 worker, got 0"):
        fit(SnowClassifier(), DEMO, cluster=0)
    with pytest.raises(Exception, match="a number of workers, got list"):
        fit(SnowClassifier(), DEMO, cluster=[2])


def test_the_workers_of_a_local_cluster_keep_the_memory_they_free():
    # (Dask's default gives it back, and each round faulted the next network's memory in)
    from snowpy.distributed.cluster import WORKER_MEMORY, connect

    with connect(1) as connected:
        seen = connected.run(lambda: {name: os.environ.get(name) for name in WORKER_MEMORY})
        assert list(seen.values()) == [WORKER_MEMORY]
        # (Dask's own settings for the workers stay)
        assert set(connected.run(lambda: os.environ.get("OMP_NUM_THREADS")).values()) == {"1"}


def test_a_bag_of_texts_and_a_dataframe_are_trained_where_their_partitions_lie(client):
    import dask.bag as db

    documents = list(read(DEMO))
    texts = db.from_sequence([d.text for d in documents], npartitions=3)
    labels = db.from_sequence([d.label for d in documents], npartitions=3)
    model = fit(SnowClassifier(epochs=3, calibrate=None), texts, labels, cluster=client)
    assert model.distributed_["shards"] == texts.npartitions
    assert sum(model.distributed_["examples"]) == 400
    test = list(read(str(demo_path("test"))))
    assert model.score([d.text for d in test], [d.label for d in test]) >= 0.9
    with pytest.raises(Exception, match="partition them alike"):
        fit(SnowClassifier(), texts, labels.repartition(2), cluster=client)
    import dask.dataframe as dd
    import pandas
    frame = dd.from_pandas(pandas.DataFrame({"body": [d.text for d in documents],
                                             "label": [d.label for d in documents]}),
                           npartitions=2)
    model = fit(SnowClassifier(epochs=3, calibrate=None), frame, cluster=client,
                reading=Reading(text_column="body"))
    assert model.distributed_["shards"] == 2
    with pytest.raises(Exception, match="no column 'text'"):
        fit(SnowClassifier(), frame, cluster=client)


@pytest.fixture
def bare_cluster(tmp_path):
    """A `dask scheduler` and two `dask worker --no-nanny` processes, as a user starts
    them: a worker killed stays dead (no nanny restarts it)."""
    import json

    scheduler_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    processes = [subprocess.Popen(dask + ["--scheduler-file", str(scheduler_file), "--port",
                                          "0", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(300):
            if scheduler_file.exists() and scheduler_file.stat().st_size:
                break
            time.sleep(0.1)
        for name in ("w1", "w2"):
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                 str(scheduler_file), "--no-nanny", "--nthreads", "1", "--no-dashboard",
                 "--name", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        address = json.loads(scheduler_file.read_text())["address"]
        with distributed.Client(address, timeout="30s") as connected:
            connected.wait_for_workers(2, timeout=60)
            yield address, {name: process for name, process in zip(("w1", "w2"),
                                                                   processes[1:])}
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_a_dask_worker_without_nanny_killed_by_its_pid_mid_round(bare_cluster, tmp_path):
    """Issue 32.5: a `dask worker --no-nanny` killed by its PID mid-round: the training
    finishes, with the weights of a run without fault (so the same accuracy), and the
    round reports no negative bytes moved."""
    address, workers = bare_cluster
    corpus = _corpus(tmp_path / "c.tsv", 3000)
    settings = {"epochs": 4, "calibrate": "cv", "early_stop": False}
    clean = fit(SnowClassifier(**settings), corpus, cluster=address, reading=Reading(shards=4))
    killed, reports = [], []

    def kill_one(round, connected):
        if round == 1 and not killed:
            workers["w2"].kill()  # SIGKILL to its PID
            killed.append(workers["w2"].pid)

    faulty = fit(SnowClassifier(**settings), corpus, cluster=address, reading=Reading(shards=4),
                 on_submit=kill_one, progress=reports.append)
    assert killed and workers["w2"].poll() is not None
    for a, b in zip(_weights(clean), _weights(faulty)):
        np.testing.assert_array_equal(a, b)
    texts = [d.text for d in read(corpus)]
    assert (faulty.predict(texts) == clean.predict(texts)).all()
    assert all(report.bytes_between_workers >= 0 for report in reports)


def test_resume_with_fewer_workers_reuses_the_checkpoints_shards(client, tmp_path):
    """Issue 32.5: --resume with fewer workers was refused ("its shards differ"): the
    default shard count followed the workers. The checkpoint's shards are reused."""
    corpus = _corpus(tmp_path / "c.tsv", 2000)
    settings = {"epochs": 4, "calibrate": None, "early_stop": False}
    clean = fit(SnowClassifier(**settings), corpus, cluster=client)  # (2 workers: 2 shards)
    folder = tmp_path / "ck"

    def stop(round, connected):
        if round == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fit(SnowClassifier(**settings), corpus, cluster=client, checkpoint=folder,
            on_submit=stop)
    resumed = fit(SnowClassifier(**settings), corpus, cluster=1, checkpoint=folder,
                  resume=True)
    assert resumed.distributed_["shards"] == 2 and resumed.distributed_["workers"] == 1
    assert resumed.distributed_["rounds"][0]["resumed"]
    for a, b in zip(_weights(clean), _weights(resumed)):
        np.testing.assert_array_equal(a, b)


def test_a_corpus_small_for_a_cluster_is_said_before_starting(tmp_path, capsys, monkeypatch):
    """Issue 32.5: --workers 2 on 20 Newsgroups took 142 s against 39 s in one process and
    the user was not told. Below the size where rounds pay off it is said before anything
    starts (and offered at a terminal); so is a local cluster of any size, whose workers
    share the cores one process would use (issue 41); a large corpus on a cluster that
    runs, or the opt-out, says nothing."""
    from snowpy.cli import distributed as cli_distributed

    corpus = _corpus(tmp_path / "c.tsv", 300)
    assert cli_distributed.cluster_worth_it(corpus, 2, None, quiet=False)  # (not a tty)
    said = capsys.readouterr().err
    assert said.startswith(f"warning: {corpus} holds about 0 MB of text: below about 256 MB "
                           "a cluster's rounds cost more than they save")
    assert said.rstrip().endswith("training with --workers 2 as asked (without it: one "
                                  "process)")
    from snowpy.cli.memory import corpus_bytes

    pattern = str(tmp_path / "*.tsv")
    assert corpus_bytes(pattern) == Path(corpus).stat().st_size
    monkeypatch.setattr(cli_distributed, "SMALL_FOR_A_CLUSTER", 1000)
    assert cli_distributed.cluster_worth_it(corpus, 2, None, quiet=False)
    said = capsys.readouterr().err  # (the corpus is larger than the threshold now)
    assert said.startswith("warning: --workers 2 starts 2 processes on this machine, which "
                           "share its cores; one process learns on every core (--threads) "
                           "without the rounds")
    assert said.rstrip().endswith("training with --workers 2 as asked (without it: one "
                                  "process)")
    assert cli_distributed.cluster_worth_it(corpus, None, "tcp://10.0.0.5:8786", quiet=False)
    assert capsys.readouterr().err == ""  # (a cluster that runs, of other machines)
    assert cli_distributed.cluster_worth_it(corpus, 2, None, quiet=True)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cli_distributed, "SMALL_FOR_A_CLUSTER", 2**40)
    monkeypatch.setenv("SNOWPY_NO_CLUSTER_CHECK", "1")
    assert cli_distributed.cluster_worth_it(corpus, 2, None, quiet=False)
    assert capsys.readouterr().err == ""


def test_the_librarys_fit_removes_its_checkpoint_when_it_returns(client, tmp_path):
    """distributed.fit(..., checkpoint=...) left the mixed networks and the calibration
    folds' in the folder, where `snowpy train --workers` removed them: the fit removes
    them now, for both; what else the folder held stays."""
    corpus = _corpus(tmp_path / "c.tsv", 600)
    settings = {"epochs": 3, "calibrate": "cv:2", "early_stop": False}
    seen = []

    def look(round, connected):
        seen.append(sorted(p.name for p in (tmp_path / "ck").glob("*")))

    fit(SnowClassifier(**settings), corpus, cluster=client, checkpoint=tmp_path / "ck",
        on_submit=look)
    assert "progress.json" in seen[-1] and "fold-1.round-1.snowpy" in seen[-1]
    assert not (tmp_path / "ck").exists()
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("mine")
    fit(SnowClassifier(**settings), corpus, cluster=client, checkpoint=shared)
    assert [p.name for p in shared.iterdir()] == ["notes.txt"]
