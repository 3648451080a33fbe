"""Sparse, noisy problems of the kind SNoW was built for, and what the sparse network
costs on them: it must learn what the full network learns.

Each class owns a few features of its own; an example of the class has a few of them
active among many features that carry no information (drawn from the whole space),
and a share of the labels is flipped. A rule that weighs every feature, as the published
analyses do, learns the owned features and cancels the noise; a network that gives a
feature no weight until it is linked to a target runs another algorithm.

:func:`make` draws a problem; :func:`run` trains every built-in rule under every link
policy on a few shapes and reports accuracy next to the links kept (what the sparse
network saves and what that costs). ``benchmarks/bench_sparse_problems.py`` writes the
table of ``docs/benchmarks.md``; ``tests/test_sparse_problems.py`` holds the property.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from snowpy.experiments.common import Result

__all__ = ["Shape", "make", "run"]


@dataclass(frozen=True)
class Shape:
    """A family member: ``classes`` classes over ``features`` features; per example
    ``noise`` uninformative features and ``informative`` of the ``owned`` features of its
    class; ``flip``: the share of labels replaced by another class; ``real``: strengths
    drawn from [0.5, 2] instead of 1."""

    classes: int = 20
    features: int = 20_000
    noise: int = 40
    informative: int = 2
    owned: int = 10
    flip: float = 0.1
    real: bool = False
    examples: int = 6000

    @property
    def name(self) -> str:
        kind = "real" if self.real else "binary"
        return (f"{self.classes} classes, {self.features:,} features, {self.noise}+"
                f"{self.informative} active, {self.flip:.0%} flipped, {kind}")


def make(shape: Shape, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """A problem of ``shape``: ``(X, y)``, CSR rows of ``shape.features`` columns and
    integer labels (the flipped ones included).

    >>> X, y = make(Shape(classes=3, features=100, noise=5, examples=4))
    >>> X.shape, y.shape, bool(X.nnz <= 4 * 7)
    ((4, 100), (4,), True)
    """
    rng = np.random.default_rng(seed)
    n, k = shape.examples, shape.classes
    owned = shape.owned if shape.owned * k <= shape.features else max(shape.features // k, 1)
    pick = min(shape.informative, owned)
    sets = rng.choice(shape.features, size=(k, owned), replace=False) \
        if owned * k <= shape.features else rng.integers(0, shape.features, (k, owned))
    truth = rng.integers(0, k, n)
    chosen = np.argsort(rng.random((n, owned)), axis=1)[:, :pick]
    informative = sets[truth[:, None], chosen]
    noise = rng.integers(0, shape.features, (n, shape.noise))
    columns = np.concatenate([informative, noise], axis=1)
    rows = np.repeat(np.arange(n), columns.shape[1])
    X = sp.csr_matrix((np.ones(rows.size), (rows, columns.ravel())),
                      shape=(n, shape.features))
    X.sum_duplicates()
    X.data[:] = rng.uniform(0.5, 2.0, X.nnz) if shape.real else 1.0
    y = truth.copy()
    flipped = rng.random(n) < shape.flip
    y[flipped] = (truth[flipped] + rng.integers(1, max(k, 2), int(flipped.sum()))) % k
    return X, y


RULES = ("perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
         "passive-aggressive", "normalised-winnow", "naive-bayes")
POLICIES = ("signed", "positive", "touched", "all")
SHAPES = (Shape(), Shape(classes=5, features=5_000, noise=100, informative=1),
          Shape(classes=50, features=100_000, noise=20, informative=3, flip=0.0, real=True))


def run(rules: tuple[str, ...] = RULES, policies: tuple[str, ...] = POLICIES,
        shapes: tuple[Shape, ...] = SHAPES, seed: int = 0, train_share: float = 2 / 3
        ) -> Result:
    """Every rule at its defaults under every link policy on every shape: held-out
    accuracy, links kept and the model file's size; scikit-learn's Perceptron (10
    epochs) beside them when it is installed."""
    import tempfile
    from pathlib import Path

    from snowpy.network import Network

    rows = []
    for number, shape in enumerate(shapes):
        X, y = make(shape, seed + number)
        cut = int(shape.examples * train_share)
        reference = _sklearn_perceptron(X[:cut], y[:cut], X[cut:], y[cut:])
        for rule in rules:
            for policy in policies:
                net = Network(rule, links=policy, epochs=10, seed=0).fit(X[:cut],
                                                                        y[:cut].tolist())
                accuracy = float(np.mean(net.predict(X[cut:]) == y[cut:]))
                with tempfile.TemporaryDirectory() as folder:
                    size = net.save(Path(folder) / "model.snowpy").stat().st_size
                rows.append({"shape": shape.name, "rule": rule, "links": policy,
                             "accuracy": round(accuracy, 4), "n_links": int(net.n_links_),
                             "full_links": int(net.n_features_in_) * len(net.classes_),
                             "model_kb": round(size / 1e3, 1),
                             "sklearn_perceptron": reference})
    return Result(
        name="noisy-sparse",
        title="Accuracy and links of every rule under every link policy",
        rows=rows, xlabel="rule", ylabel="held-out accuracy",
        note="the sparse network must learn what the full network learns",
    )


def _sklearn_perceptron(X: sp.csr_matrix, y: np.ndarray, X_test: sp.csr_matrix,
                        y_test: np.ndarray) -> float | None:
    try:
        from sklearn.linear_model import Perceptron
    except ImportError:
        return None
    model = Perceptron(max_iter=10, tol=None, random_state=0).fit(X, y)
    return round(float(np.mean(model.predict(X_test) == y_test)), 4)
