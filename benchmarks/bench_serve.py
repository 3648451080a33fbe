"""A model served over the network, under load: ``snowpy serve`` beside Vowpal Wabbit's
``--daemon`` on the same machine and documents.

    python benchmarks/bench_serve.py [--corpora DIR] [--requests 4000] [--clients 8]

20 Newsgroups (bydate): each system is trained on the training split (snowpy at its
defaults, calibrated; VW ``--oaa 20 -b 18 --ngram 2``, one pass), then served, and
``--clients`` threads on this machine send it ``--requests`` single-document requests
in all over kept-alive connections: the test documents in turn, each client its own
share. Two workloads: predictions only, then half predictions and half feedback (a
labelled document learned online: snowpy's ``POST /learn``, journaled and fsynced
before it is acknowledged; VW's daemon learns a labelled line and answers with its
prediction, keeping nothing on disk). Reported per system and workload: requests per
second over the whole run and the per-request latency's median (p50) and 99th
percentile (p99), in milliseconds, the clients' own clock (a request's send to its
answer's last byte). VW's daemon forks ``--num_children`` processes (2 here, the
cores); snowpy's server is one process (uvicorn, the model's work in a thread pool).

Writes ``benchmarks/results/serve.json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from common import ROOT, corpora_dir, load_20newsgroups, machine
from systems import _vw_lines

RESULTS = ROOT / "benchmarks" / "results" / "serve.json"
#: VW's daemon through its Python package: the package's ``python -m vowpalwabbit`` runs
#: the parser only for ``-d`` or ``--passes``, and a daemon's connections need it run.
DAEMON = ("import sys, vowpalwabbit; from vowpalwabbit import pyvw; "
          "w = vowpalwabbit.Workspace(arg_list=sys.argv[1:]); "
          "pyvw.pylibvw.vw.run_parser(w); w.finish()")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, process: subprocess.Popen) -> None:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(process.stderr.read().decode() if process.stderr else "")
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def _load(send, clients: int, requests: int) -> dict[str, float]:
    """``send(client, i)`` from ``clients`` threads, ``requests`` in all."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures: list[BaseException] = []

    def work(client: int) -> None:
        try:
            connection = send.connect()
            for i in range(client, requests, clients):
                began = time.perf_counter()
                send(connection, i)
                latencies[client].append(time.perf_counter() - began)
            connection.close()
        except BaseException as exc:  # noqa: BLE001 - reported in the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in range(clients)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    if failures:
        raise RuntimeError(f"a client failed: {failures[0]!r}")
    times = np.concatenate([np.array(t) for t in latencies]) * 1000
    return {"requests": requests, "seconds": round(seconds, 3),
            "requests_per_s": round(requests / seconds, 1),
            "p50_ms": round(float(np.percentile(times, 50)), 3),
            "p99_ms": round(float(np.percentile(times, 99)), 3)}


class _Http:
    """snowpy serve's clients: one kept-alive HTTP connection each."""

    def __init__(self, port: int, texts: list[str], labels: list[str], learn: bool) -> None:
        self.port, self.texts, self.labels, self.learn = port, texts, labels, learn

    def connect(self) -> http.client.HTTPConnection:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        connection.connect()  # (Nagle off, as any load tester's client: http.client sends
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # in pieces)
        return connection

    def __call__(self, connection: http.client.HTTPConnection, i: int) -> None:
        text = self.texts[i % len(self.texts)]
        if self.learn and i % 2:
            path, body = "/learn", {"text": text, "label": self.labels[i % len(self.texts)]}
        else:
            path, body = "/predict", {"text": text}
        connection.request("POST", path, json.dumps(body),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}")


class _Daemon:
    """VW --daemon's clients: one TCP connection each, a line out and a line back."""

    def __init__(self, port: int, lines: list[str], learn: bool) -> None:
        self.port, self.lines, self.learn = port, lines, learn

    def connect(self) -> socket.socket:
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=60)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffers = getattr(self, "buffers", {})
        self.buffers[connection.fileno()] = b""
        return connection

    def __call__(self, connection: socket.socket, i: int) -> None:
        line = self.lines[i % len(self.lines)]
        if not (self.learn and i % 2):
            line = "|" + line.split("|", 1)[1]  # (no label: a prediction only)
        connection.sendall(line.encode())
        pending = self.buffers[connection.fileno()]
        while b"\n" not in pending:
            chunk = connection.recv(65536)
            if not chunk:
                raise RuntimeError("the daemon closed the connection")
            pending += chunk
        self.buffers[connection.fileno()] = pending.split(b"\n", 1)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    corpora = corpora_dir(args.corpora)
    train_texts, train_labels = load_20newsgroups(corpora, "train")
    test_texts, test_labels = load_20newsgroups(corpora, "test")
    results: dict[str, object] = {"machine": machine(), "date": time.strftime("%Y-%m-%d"),
                                  "requests": args.requests, "clients": args.clients}
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        import snowpy

        model = work / "m.snowpy"
        snowpy.SnowClassifier().fit(train_texts, train_labels).save(model)
        classes = sorted(set(train_labels))
        index = {label: i for i, label in enumerate(classes)}
        (work / "train.vw").write_text("".join(_vw_lines(train_texts, train_labels, index,
                                                         False)))
        subprocess.run([sys.executable, "-m", "vowpalwabbit", "-d", str(work / "train.vw"),
                        "--oaa", "20", "-b", "18", "--ngram", "2", "-f", str(work / "m.vw"),
                        "--quiet"], check=True)
        lines = list(_vw_lines(test_texts, test_labels, index, False))
        for workload, learn in (("predict", False), ("predict+learn", True)):
            port = _free_port()
            server = subprocess.Popen(
                [sys.executable, "-m", "snowpy", "serve", str(model), "--port", str(port),
                 "--state", str(work / f"state-{workload}"), "--max-batch", "1000"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ})
            try:
                _wait(port, server)
                _load(_Http(port, test_texts, test_labels, learn), args.clients, 200)  # warm
                ours = _load(_Http(port, test_texts, test_labels, learn), args.clients,
                             args.requests)
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=120)
            port = _free_port()
            daemon = subprocess.Popen(
                [sys.executable, "-c", DAEMON, "-i", str(work / "m.vw"), "--daemon",
                 "--foreground", "--port", str(port), "--num_children", "2", "--quiet",
                 *([] if learn else ["-t"])],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                _wait(port, daemon)
                _load(_Daemon(port, lines, learn), args.clients, 200)
                theirs = _load(_Daemon(port, lines, learn), args.clients, args.requests)
            finally:
                daemon.send_signal(signal.SIGTERM)
                daemon.wait(timeout=60)
            results[workload] = {"snowpy serve": ours, "vw --daemon": theirs,
                                 "rps_ratio": round(ours["requests_per_s"]
                                                    / theirs["requests_per_s"], 3)}
            print(workload, json.dumps(results[workload]), flush=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
