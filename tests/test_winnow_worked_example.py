"""The worked Winnow run of seed 002, step by step.

n = 1024, f = x1 v x2 v x1023 v x1024, alpha = 2, beta = 1/2, theta = n,
every weight starts at 1. Each row of the slides' table is one call of
``partial_fit``; after it the weight vector must be the slides' one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import snowpy

N = 1024


def example(*ones: int) -> sp.csr_matrix:
    """A row with x_i = 1 for the 1-based indices given."""
    x = np.zeros((1, N))
    x[0, [i - 1 for i in ones]] = 1
    return sp.csr_matrix(x)


def weights(net: snowpy.Network) -> np.ndarray:
    return net.coef_[0]


def expected(**given: float) -> np.ndarray:
    """All ones except the 1-based positions given as w<i>=value."""
    w = np.ones(N)
    for key, value in given.items():
        w[int(key[1:]) - 1] = value
    return w


def make_network() -> snowpy.Network:
    return snowpy.Network(
        "winnow", alpha=2, beta=0.5, theta=N, initial_weight=1, bias=False,
        average=False, links="all", precision="float64", discard=None, thickness=0,
    )  # (every attribute linked: the test sets the slides' state link by link)


def test_slides_table_row_by_row():
    net = make_network()
    rows = [
        # (active 1-based indices, label, mistake?, expected weights)
        (tuple(range(1, N + 1)), True, 0, expected()),
        ((), False, 0, expected()),
        ((3, 4, 5), False, 0, expected()),
        ((1,), True, 1, expected(w1=2)),
        ((2,), True, 1, expected(w1=2, w2=2)),
        ((1, 2, 3), True, 1, expected(w1=4, w2=4, w3=2)),
        ((1, N), True, 1, expected(w1=8, w2=4, w3=2, w1024=2)),
    ]
    for ones, positive, mistake, want in rows:
        net.partial_fit(example(*ones), [["f"] if positive else []])
        assert net.mistakes_[-1] == mistake
        np.testing.assert_array_equal(weights(net), want)

    # "Suppose after many steps, w = (512, 256, 512, 512, ..., 512)": set that state
    # (the slides skip the steps) and continue with the table's last two rows.
    state = np.full(N, 512.0)
    state[1] = 256.0
    net.engine_.store.W[net.engine_.store.positions(np.arange(N), 0), 0] = state
    net.engine_.cache.invalidate()

    net.partial_fit(example(3, 4), [[]])  # negative, activation 1024 >= theta: demote
    assert net.mistakes_[-1] == 1
    want = state.copy()
    want[[2, 3]] = 256.0
    np.testing.assert_array_equal(weights(net), want)

    net.partial_fit(example(N), [["f"]])  # positive, activation 512 < theta: promote
    want[N - 1] = 1024.0
    np.testing.assert_array_equal(weights(net), want)
    assert list(net.engine_.promotions) == [5] and list(net.engine_.demotions) == [1]


def test_converges_to_the_disjunction():
    """Trained on every single-attribute example, Winnow predicts exactly f."""
    relevant = {1, 2, 1023, 1024}
    X = sp.identity(N, format="csr")
    y = [["f"] if i + 1 in relevant else [] for i in range(N)]
    order = [0] + list(range(1, N))  # first example positive: it creates the target
    net = make_network().set_params(epochs=20, shuffle=False)
    net.fit(X[order], [y[i] for i in order])
    assert net.mistakes_[-1] == 0
    predicted = net.predict(X)
    assert [i + 1 for i, labels in enumerate(predicted) if labels] == sorted(relevant)
    assert all(weights(net)[i - 1] >= N for i in relevant)
