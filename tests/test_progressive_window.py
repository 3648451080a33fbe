"""The progressive calibration window and how a network's sigmoids and window are kept in
its model file (``snowpy/network/calibrating.py``), held to what the module promises:
the newest scores kept in a bounded ring, refitted every few examples and then every
tenth of the window, and a file's window refused in one line when it is inconsistent."""

from types import SimpleNamespace

import numpy as np
import pytest

import snowpy
from snowpy.calibration import Calibration
from snowpy.exceptions import ModelFileError
from snowpy.network.calibrating import (
    PROGRESSIVE_WINDOW,
    REFIT_EVERY,
    WINDOW_SCORES,
    ProgressiveWindow,
    calibration_from_file,
    calibration_to_file,
    fit_progressive,
    normalisation_of,
    refresh_progressive,
)
from snowpy.network.labels import LabelIndex


def block(n, width, start=0.0, every=3):
    """``n`` rows of distinct scores over ``width`` targets, the first target positive on
    every ``every``-th row."""
    scores = start + np.arange(n * width, dtype=np.float64).reshape(n, width)
    positives = np.zeros((n, width), dtype=bool)
    positives[::every, 0] = True
    return scores, positives


@pytest.mark.parametrize("targets, limit", [
    (0, 100_000), (1, 100_000), (50, 100_000),  # 100,000 examples at most...
    (51, 98_039), (100, 50_000), (19_000, 263),  # ... and 5,000,000 scores in all...
    (19_532, 256), (1_000_000, 256),  # ... but never fewer than 256 examples
])
def test_the_window_keeps_the_newest_examples_up_to_its_bound(targets, limit):
    assert (PROGRESSIVE_WINDOW, WINDOW_SCORES) == (100_000, 5_000_000)
    assert ProgressiveWindow(targets).limit == limit


def test_the_window_grows_as_examples_come_and_never_beyond_its_bound(monkeypatch):
    """Appending costs what is appended: the buffer starts at 64 examples, doubles (or
    takes what a block needs) up to the bound, and keeps the newest examples, oldest
    first, whatever the sizes of the blocks; a block longer than the window keeps its
    newest part."""
    from snowpy.network import calibrating

    monkeypatch.setattr(calibrating, "PROGRESSIVE_WINDOW", 300)
    window = ProgressiveWindow(2)
    assert window.scores.shape == (64, 2) and window.filled == 0
    scores, positives = block(1000, 2, every=7)

    def add(start, stop, replaced):
        buffer = window.scores
        window.add(scores[start:stop], positives[start:stop])
        assert (window.scores is not buffer) == replaced  # (replaced only to grow)

    add(0, 0, False)  # (nothing)
    assert window.filled == 0 and window.since_fit == 0
    add(0, 60, False)
    assert window.scores.shape[0] == 64 and window.filled == 60
    add(60, 64, False)  # exactly full: not grown yet
    assert window.scores.shape[0] == 64 and window.filled == 64
    add(64, 70, True)  # past 64: doubled
    assert window.scores.shape[0] == 128 and window.filled == 70
    add(70, 270, True)  # 270 wanted: taken whole
    assert window.scores.shape[0] == 270 and window.filled == 270
    add(270, 290, True)  # the bound, not 540
    assert window.scores.shape[0] == 300 and window.filled == 290
    kept, kept_positives = window.arrays()
    np.testing.assert_array_equal(kept, scores[:290])
    np.testing.assert_array_equal(kept_positives, positives[:290])
    add(290, 340, False)  # around the ring, in the same buffer
    assert window.scores.shape[0] == 300 and window.filled == 300
    kept, kept_positives = window.arrays()
    np.testing.assert_array_equal(kept, scores[40:340])
    np.testing.assert_array_equal(kept_positives, positives[40:340])
    add(340, 1000, False)  # longer than the window: its newest part
    kept, kept_positives = window.arrays()
    np.testing.assert_array_equal(kept, scores[700:1000])
    np.testing.assert_array_equal(kept_positives, positives[700:1000])
    assert window.stale()  # (a window's worth of new examples, at least)
    assert window.low == 0.0  # (the lowest score seen, 0, and never above it)


def test_a_window_of_a_single_block_is_that_block():
    scores, positives = block(5, 3, start=-4.0)
    window = ProgressiveWindow(3)
    window.add(scores, positives)
    kept, kept_positives = window.arrays()
    np.testing.assert_array_equal(kept, scores)
    np.testing.assert_array_equal(kept_positives, positives)
    assert window.low == -4.0 and window.position == 5


def test_targets_met_later_scored_the_lowest_seen_before_them():
    window = ProgressiveWindow(1)
    window.add(np.array([[3.0], [-2.0]]), np.array([[True], [False]]))
    window.add(np.array([[1.0, 5.0]]), np.array([[False, True]]))
    kept, kept_positives = window.arrays()
    assert kept.tolist() == [[3.0, -3.0], [-2.0, -3.0], [1.0, 5.0]]
    assert kept_positives.tolist() == [[True, False], [False, False], [False, True]]
    # a window whose rows the one-example path writes is widened (and grown) alike
    assert window.row(4) == 3
    assert window.scores.shape[1] == 4 and (window.scores[:3, 2:] == -3.0).all()
    assert not window.positives[:3, 2:].any()
    # a block of fewer targets than the window's (a network's block before it met its
    # last labels) scores the lowest seen, minus one, at the others
    window.add(np.array([[-6.0, 2.0]]), np.array([[True, True]]))
    kept, kept_positives = window.arrays()
    assert kept[-1].tolist() == [-6.0, 2.0, -7.0, -7.0]
    assert kept_positives[-1].tolist() == [True, True, False, False]


def test_the_one_example_path_takes_rows_around_the_ring(monkeypatch):
    from snowpy.network import calibrating

    monkeypatch.setattr(calibrating, "PROGRESSIVE_WINDOW", 256)
    window = ProgressiveWindow(1)
    sizes = []
    for i in range(600):
        buffer = window.scores
        at = window.row(1)
        # a row costs the row: the buffer is replaced only to grow, when it is full
        assert (window.scores is buffer) == (i not in (64, 128))
        sizes.append(window.scores.shape[0])
        window.scores[at, 0] = float(i)
        window.positives[at, 0] = i % 2 == 0
        window.took(float(i) - 10.0 if i == 500 else float(i))
        assert window.filled == min(i + 1, 256)
    assert sizes == [64] * 64 + [128] * 64 + [256] * 472  # doubled, up to the bound
    kept, kept_positives = window.arrays()
    assert kept[:, 0].tolist() == list(range(344, 600))
    assert kept_positives[:, 0].tolist() == [i % 2 == 0 for i in range(344, 600)]
    assert window.low == -0.0 and window.since_fit == 600  # (0 was the lowest but one...)
    window.took(-7.5)
    assert window.low == -7.5  # (... and a lower one is taken)


def test_the_sigmoids_are_refitted_every_few_examples_then_every_tenth_of_the_window():
    assert REFIT_EVERY == 8
    window = ProgressiveWindow(1)
    scores, positives = block(400, 1)
    window.add(scores[:7], positives[:7])
    assert not window.stale()  # 7 new of 7
    window.add(scores[7:8], positives[7:8])
    assert window.stale()  # 8 new: every 8 while the window is small
    window.add(scores[8:200], positives[8:200])
    window.since_fit = 0  # (a fit)
    window.add(scores[200:219], positives[200:219])
    assert window.filled == 219 and not window.stale()  # 19 new of 219: a tenth is 21
    window.add(scores[219:221], positives[219:221])
    assert window.filled == 221 and not window.stale()  # 21 new of 221: a tenth is 22
    window.add(scores[221:222], positives[221:222])
    assert window.stale()  # 22 of 222


def test_a_restored_window_is_the_one_saved_and_fitted_on():
    scores, positives = block(70, 2, start=-1.5)
    window = ProgressiveWindow.restore(scores.astype(np.float32), positives.astype(np.uint8))
    kept, kept_positives = window.arrays()
    assert kept.dtype == np.float64 and kept_positives.dtype == bool
    np.testing.assert_array_equal(kept, scores)
    np.testing.assert_array_equal(kept_positives, positives)
    assert window.since_fit == 0 and not window.stale() and window.low == -1.5


def engine_with(labels, calibrate="progressive", calibration=None):
    return SimpleNamespace(labels=LabelIndex(labels), multilabel=False,
                           calibration=calibration, progressive=None,
                           normalisation=lambda multilabel: "sum")


def test_a_window_and_its_sigmoids_round_trip_through_a_files_part():
    """The window is kept with where it stood between fits (examples since the last
    fit, the lowest score); an inference-only file (no window) and an empty window
    write none."""
    engine = engine_with(["a", "b"])
    window = ProgressiveWindow(2)
    scores, positives = block(40, 2, start=-3.0, every=2)
    positives[1::2, 1] = True
    window.add(scores, positives)
    fit_progressive(engine, window)
    window.add(scores[:5] - 10.0, positives[:5])
    header, arrays = {}, {}
    calibration_to_file(engine.calibration, window, header, arrays)
    assert header["progressive"] == {"since_fit": 5, "low": -13.0}
    assert header["calibration"] == engine.calibration.header()
    assert sorted(arrays) == ["calibration_a", "calibration_b", "progressive_positives",
                              "progressive_scores"]
    assert arrays["progressive_positives"].dtype == np.uint8
    restored = engine_with(["a", "b"])
    calibration_from_file(restored, "progressive", header, arrays, "m.snowpy")
    for kept, expected in zip(restored.progressive.arrays(), window.arrays()):
        np.testing.assert_array_equal(kept, expected)
    assert restored.progressive.since_fit == 5 and restored.progressive.low == -13.0
    np.testing.assert_array_equal(restored.calibration.a, engine.calibration.a)
    np.testing.assert_array_equal(restored.calibration.b, engine.calibration.b)
    # a file of snowpy 0.x, before where the window stood was kept: refit after a tenth
    del header["progressive"]
    older = engine_with(["a", "b"])
    calibration_from_file(older, "progressive", header, arrays, "m.snowpy")
    assert older.progressive.since_fit == 0 and older.progressive.low == -13.0
    for window_kept in (None, ProgressiveWindow(2)):
        header, arrays = {}, {}
        calibration_to_file(None, window_kept, header, arrays)
        assert header == {"calibration": None} and arrays == {}
    uncalibrated = engine_with(["a", "b"])
    calibration_from_file(uncalibrated, "progressive", header, arrays, "m.snowpy")
    assert uncalibrated.calibration is None
    assert uncalibrated.progressive is not None and uncalibrated.progressive.filled == 0
    calibration_from_file(uncalibrated, None, header, arrays, "m.snowpy")
    assert uncalibrated.progressive is None  # (not calibrated progressively: no window)


@pytest.mark.parametrize("edit, message", [
    (lambda h, a: a.pop("progressive_positives"), "progressive calibration window is inconsistent"),
    (lambda h, a: a.update(progressive_positives=a["progressive_positives"][:-1]),
     "progressive calibration window is inconsistent"),
    (lambda h, a: a.update(progressive_scores=a["progressive_scores"][:, 0],
                           progressive_positives=a["progressive_positives"][:, 0]),
     "progressive calibration window is inconsistent"),
    (lambda h, a: a.update(progressive_scores=np.zeros((4, 3)),
                           progressive_positives=np.zeros((4, 3), np.uint8)),
     "progressive calibration window is inconsistent"),  # (wider than the labels)
    (lambda h, a: h.update(progressive={"since_fit": "soon"}), "progressive calibration state is invalid"),
    (lambda h, a: h.update(progressive={"since_fit": 1, "low": [1]}), "progressive calibration state is invalid"),
    (lambda h, a: h.update(progressive=[1, 2]), "progressive calibration state is invalid"),
    (lambda h, a: a.pop("calibration_b"), "calibration is invalid"),
])
def test_an_inconsistent_window_in_a_file_is_refused_naming_it(edit, message):
    engine = engine_with(["a", "b"])
    window = ProgressiveWindow(2)
    window.add(*block(10, 2))
    header, arrays = {}, {}
    calibration_to_file(Calibration([-1.0, -2.0], [0.5, 0.25], normalize="sum",
                                    method="progressive"), window, header, arrays)
    edit(header, arrays)
    with pytest.raises(ModelFileError, match=f"^m.snowpy: the {message}"):
        calibration_from_file(engine_with(["a", "b"]), "progressive", header, arrays,
                              "m.snowpy")
    assert engine.progressive is None


def test_a_narrower_window_than_the_labels_is_taken():
    header, arrays = {}, {}
    window = ProgressiveWindow(1)
    window.add(*block(10, 1))
    calibration_to_file(None, window, header, arrays)
    engine = engine_with(["a", "b", "c"])
    calibration_from_file(engine, "progressive", header, arrays, "m.snowpy")
    assert engine.progressive.filled == 10


def test_targets_without_scores_yet_get_a_sigmoid_at_once():
    """A fit covers every label the network knows, its targets met after the window's
    scores scoring below every score in it; the sigmoids are refitted when new targets
    came or the window is stale, and not otherwise."""
    engine = engine_with(["a", "b", "c"])
    window = ProgressiveWindow(2)
    scores, positives = block(30, 2, every=2)
    positives[1::2, 1] = True
    window.add(scores, positives)
    fit_progressive(engine, window)
    assert engine.calibration.a.size == 3 and window.since_fit == 0
    padded = np.hstack([scores, np.full((30, 1), -1.0)])
    expected = Calibration.fit(padded, np.hstack([positives, np.zeros((30, 1), bool)]),
                               normalize="sum", method="progressive")
    np.testing.assert_allclose(engine.calibration.a, expected.a, rtol=1e-6)
    fitted = engine.calibration
    refresh_progressive(engine, window)  # nothing new: kept
    assert engine.calibration is fitted
    engine.labels.add("d")
    refresh_progressive(engine, window)  # a new target: refitted
    assert engine.calibration is not fitted and engine.calibration.a.size == 4
    fitted = engine.calibration
    window.add(scores[:7], positives[:7])
    refresh_progressive(engine, window)
    assert engine.calibration is fitted  # 7 new: not yet
    window.add(scores[:1], positives[:1])
    refresh_progressive(engine, window)
    assert engine.calibration is not fitted  # 8 new: refitted
    empty = engine_with(["a"])
    refresh_progressive(empty, ProgressiveWindow(1))  # an empty window fits nothing
    assert empty.calibration is None


@pytest.mark.parametrize("rule, links, single", [
    ("winnow", "touched", "softmax"),  # missing links weigh the initial weight
    ("winnow", "all", "softmax"),
    ("balanced-winnow", "touched", "softmax"),
    ("winnow", "signed", "sum"),  # missing links weigh 0
    ("winnow", "positive", "sum"),
    ("passive-aggressive", "touched", "sum"),  # its weights start at 0
    ("naive-bayes", "touched", "softmax"),  # the rule's own
])
def test_probabilities_combine_as_the_rule_says_or_by_differences(rule, links, single):
    net = snowpy.Network(rule, links=links).fit(np.eye(4), ["a", "b", "c", "a"])
    assert normalisation_of(net.engine_, False) == single
    assert normalisation_of(net.engine_, True) == "none"  # a set of labels: each alone
    learner = SimpleNamespace(normalisation=lambda multilabel: f"its own {multilabel}")
    assert normalisation_of(learner, True) == "its own True"  # (a learner's network)


def test_a_forgotten_targets_column_leaves_the_window():
    """``without``: a forgotten label's scores and labels go from every kept example;
    a target the window holds no column for (added after its last scores) leaves it as
    it is."""
    window = ProgressiveWindow(3)
    scores, positives = block(5, 3, every=2)
    positives[1, 1] = positives[2, 2] = True
    window.add(scores, positives)
    window.without(1)
    for kept, expected in zip(window.arrays(), (scores[:, [0, 2]], positives[:, [0, 2]])):
        np.testing.assert_array_equal(kept, expected)
    window.without(2)  # (no such column: the window has two)
    assert window.scores.shape[1] == window.positives.shape[1] == 2
    for kept, expected in zip(window.arrays(), (scores[:, [0, 2]], positives[:, [0, 2]])):
        np.testing.assert_array_equal(kept, expected)


def test_a_refit_starts_from_the_sigmoids_the_network_has_unless_told_not_to(monkeypatch):
    """``fit_progressive`` hands the sigmoids the network has to the fit as its start
    (the window moved on from them a little), and none with ``warm=False`` (a fit that
    depends on the window alone); ``refresh_progressive`` refits warm. A window starts
    with no targets."""
    from snowpy.network import calibrating

    assert ProgressiveWindow().scores.shape == (64, 0)
    starts = []

    def fit(*args, **kwargs):
        starts.append(kwargs["start"])
        return Calibration.fit(*args, **kwargs)

    monkeypatch.setattr(calibrating, "Calibration", SimpleNamespace(fit=fit))
    engine = engine_with(["a", "b"])
    window = ProgressiveWindow(2)
    scores, positives = block(30, 2, every=2)
    positives[1::2, 1] = True
    window.add(scores, positives)
    fit_progressive(engine, window)  # (no sigmoids yet)
    first = engine.calibration
    fit_progressive(engine, window)
    second = engine.calibration
    fit_progressive(engine, window, warm=False)
    window.add(scores[:8], positives[:8])
    third = engine.calibration
    refresh_progressive(engine, window)  # (8 new: stale)
    assert starts == [None, first, None, third] and second is not first
