"""SNoW's sparse network: link policies, eligibility, discarding, on worked examples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import snowpy
from snowpy.plugins import list_rules

BUILTIN_RULES = ["perceptron", "winnow", "balanced-winnow", "thick-separator", "aggressive",
                 "passive-aggressive"]


def rows(*dense):
    return sp.csr_matrix(np.array(dense, dtype=float))


def links_of(net):
    """The set of (feature, label) links, the bias as feature -1."""
    csr = net.engine_.effective_links().tocoo()
    ids = np.r_[-1, net.feature_ids_]
    return {(int(ids[r]), str(net.classes_[t])) for r, t in zip(csr.row, csr.col)}


def test_eligibility_links_a_feature_from_its_kth_occurrence():
    """SNoW -e count:2: a feature is linked (and learns) only once it has been active in
    two training examples; the bias is always eligible."""
    X = rows([1, 1, 0], [1, 0, 1], [1, 1, 0])
    net = snowpy.Network("perceptron", links="positive", eligibility=2, epochs=1,
                         shuffle=False, average=False).fit(X, ["a", "b", "a"])
    # 1: x0, x1 seen once: only the bias is linked to a
    # 2: x0 seen twice: linked to b (with the bias); x2 seen once
    # 3: x0 (3), x1 (2): both linked to a
    assert links_of(net) == {(-1, "a"), (-1, "b"), (0, "b"), (0, "a"), (1, "a")}
    store = net.engine_.store
    counts = store.count[store.prediction_rows(sp.csr_matrix(np.eye(3)))]
    assert counts.tolist() == [3, 2, 1]
    assert net.coef_[:, 2].tolist() == [0.0, 0.0]  # x2 is in no target's concept


def test_eligibility_withholds_updates_under_the_touched_policy():
    """With touched links an ineligible feature weighs its initial weight but is not
    updated: after one example only the bias moved."""
    net = snowpy.Network("perceptron", links="touched", eligibility=2, epochs=1,
                         average=False, learning_rate=1.0, theta=0.5)
    net.partial_fit(rows([1, 1]), ["a"])  # activation 0 < 0.5: promote, the bias only
    assert net.coef_.tolist() == [[0.0, 0.0]] and net.intercept_.tolist() == [0.5]
    net.partial_fit(rows([1, 0]), [["a"][0]])  # x0 now eligible; 1 >= 0.5: right
    net.partial_fit(rows([1, 0]), ["b"])  # a claims it (1 >= 0.5): demote a on bias, x0
    assert net.coef_[0].tolist() == [-1.0, 0.0]


def test_discard_drops_negligible_links_at_the_end_of_fit():
    """SNoW -d: after training, links whose weight fell below a fraction of the initial
    weight are dropped (and then weigh what a missing link weighs: 0)."""
    X = rows([1, 1], [0, 1], [0, 1], [0, 1])
    options = dict(links="positive", initial_weight=1.0, theta=1.5, alpha=2.0, beta=0.25,
                   bias=False, average=False, epochs=1, shuffle=False, thickness=0.0)
    labels = ["a", "b", "a", "a"]
    # 1: x0-a, x1-a at 1 (activation 2, right); 2: x1-b at 1, b promoted to 2;
    # 3: a promoted on x1 (1 -> 2), b demoted on x1 (2 -> 0.5); 4: right for both
    kept = snowpy.Network("winnow", **options).fit(X, labels)
    assert kept.coef_.tolist() == [[1.0, 2.0], [0.0, 0.5]] and kept.n_links_ == 3
    pruned = snowpy.Network("winnow", discard=0.6, **options).fit(X, labels)
    assert pruned.coef_.tolist() == [[1.0, 2.0], [0.0, 0.0]] and pruned.n_links_ == 2
    assert pruned.prune() == 0  # nothing more to drop


def test_discard_for_rules_that_start_at_zero_is_relative_to_the_mean_weight():
    X = rows([1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0])
    net = snowpy.Network("perceptron", links="positive", learning_rate=1.0, bias=False,
                         average=False, epochs=1, shuffle=False,
                         discard=None).fit(X, ["a", "b", "c", "a"])
    magnitudes = np.abs(net.engine_.effective_links().data)
    before = net.n_links_
    net.set_params(discard=1.0)
    dropped = net.prune()
    assert dropped == int((magnitudes < magnitudes.mean()).sum()) and dropped > 0
    assert net.n_links_ == before - dropped


@pytest.mark.parametrize("links", ["positive", "signed", "touched", "all"])
def test_pruning_moves_the_kept_links_in_place_and_training_goes_on_alike(tmp_path, links):
    """Discarding compacts the pool where it lies (blocks moved and dense rows included:
    twelve classes, two epochs): exactly the links whose weight is far enough from a
    missing link's stay, with their weights, and the network goes on learning as the
    same network read back from its file (whose pool is laid out afresh)."""
    rng = np.random.default_rng(5)
    X = sp.csr_matrix((rng.random((300, 200)) < 0.06).astype(float))
    y = rng.integers(0, 12, 300)
    net = snowpy.Network("balanced-winnow", links=links, epochs=2, early_stop=False,
                         discard=None).fit(X, y)
    before = net.engine_.effective_links().tocoo()
    distance = np.abs(before.data - net.engine_.store.absent)
    scale = abs(net.engine_.kernel.initial_effective_weight) or distance.mean()  # (pruning.discard)
    net.set_params(discard=0.3)
    dropped = net.prune()
    far = (distance >= 0.3 * scale) | (before.row == 0)
    after = net.engine_.effective_links().tocoo()
    assert dropped == int((~far).sum()) > 0 and net.n_links_ == int(far.sum())
    assert sorted(zip(after.row, after.col, after.data)) == \
        sorted(zip(before.row[far], before.col[far], before.data[far]))
    loaded = snowpy.load(net.save(tmp_path / "m.snowpy"))
    for model in (net, loaded):
        model.partial_fit(X[:100], y[:100])
    np.testing.assert_array_equal(net.decision_function(X), loaded.decision_function(X))


def test_a_fragmented_pool_is_closed_up_before_it_grows_and_learns_the_same(monkeypatch):
    """Rows that grow leave runs of free slots behind (with many targets, runs few later
    rows fit); past a share of the pool (links.FRAGMENTED) they are closed up before the
    pool grows: the blocks move down whole, and the network learned is the same, weight
    for weight, as one whose pool was never closed up."""
    from snowpy.network import links as links_module
    from snowpy.network.links import IDLE, USED

    rng = np.random.default_rng(11)
    X = sp.csr_matrix((rng.random((400, 300)) < 0.05) * rng.random((400, 300)))
    y = rng.integers(0, 60, 400)
    learned, closed, stores = {}, {}, {}
    for share in (np.inf, 0.0):
        monkeypatch.setattr(links_module, "FRAGMENTED", share)
        calls = []
        monkeypatch.setattr(links_module.LinkStore, "defragment", lambda store, made=(
            links_module.LinkStore.defragment): calls.append(1) or made(store))
        net = snowpy.Network("passive-aggressive", epochs=2, discard=None, n_jobs=1,
                             early_stop=False).fit(X, y)
        stores[share] = net.engine_
        learned[share] = (net.engine_.effective_links().toarray(),
                          net.decision_function(X))
        closed[share] = len(calls)
        monkeypatch.undo()
    assert closed[np.inf] == 0 and closed[0.0] > 0
    np.testing.assert_array_equal(learned[np.inf][0], learned[0.0][0])
    np.testing.assert_array_equal(learned[np.inf][1], learned[0.0][1])
    # closed up by hand: no free run left, every row's block where the one before ends
    engine = stores[np.inf]
    store = engine.store
    idle = int(store.meta[IDLE])
    store.defragment()
    rows = store.rows[:store.n_rows][store.rows[:store.n_rows]["cap"] > 0]
    rows = np.sort(rows, order="start")
    assert idle > 0 and int(store.meta[IDLE]) == 0
    assert rows["start"].tolist() == np.r_[0, np.cumsum(rows["cap"])[:-1]].tolist()
    assert int(store.meta[USED]) == int(rows["cap"].sum())
    np.testing.assert_array_equal(engine.effective_links().toarray(), learned[0.0][0])


def test_eligibility_by_percent_keeps_each_targets_most_active_features():
    """SNoW -e percent:50: after the first epoch, each target keeps the links of the half
    of its features most often active in its positive examples (ties kept)."""
    X = rows([1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 1, 0], [0, 1, 1])
    labels = ["a", "a", "a", "b", "b"]
    net = snowpy.Network("perceptron", links="positive", eligibility="percent:50", epochs=2,
                         early_stop=False, shuffle=False).fit(X, labels)
    # a: bias 3, x0 3, x1 1, x2 1 -> bias, x0; b: bias 2, x1 2, x2 1 -> bias, x1
    assert links_of(net) == {(-1, "a"), (0, "a"), (-1, "b"), (1, "b")}


@pytest.mark.parametrize("percent,kept", [(66, {0, 1}), (67, {0, 1, 2})])
def test_prune_applies_the_percent_quota_to_a_network_learned_by_partial_fit(percent, kept):
    """partial_fit ranks no links; prune() applies eligibility="percent:p" then. No bias:
    target a has no link (its example has no feature), b has x0 (active in 3 of its
    examples), x1 (2) and x2 (1), so ceil(0.66 * 3) = 2 links stay, ceil(0.67 * 3) = 3;
    c keeps x3, its only link."""
    X = rows([0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1])
    net = snowpy.Network("winnow", links="positive", bias=False, discard=None,
                         eligibility=f"percent:{percent}")
    net.partial_fit(X, ["a", "b", "b", "b", "c"])
    assert links_of(net) == {(0, "b"), (1, "b"), (2, "b"), (3, "c")}
    assert net.prune() == 3 - len(kept)
    assert links_of(net) == {(feature, "b") for feature in kept} | {(3, "c")}
    assert net.prune() == 0  # the quota of the links left is all of them


def test_discard_of_a_rule_starting_at_zero_is_measured_against_the_links_that_moved():
    """links="all" keeps a link per feature seen, moved or not. The perceptron's links
    after this pass weigh -2, -2, -1, -1, -1 and four stay at 0: the scale is the mean
    distance of the five that moved, 7/5, so discard=0.8 drops what is nearer to 0 than
    1.12 and keeps the two at -2 (the nine links' mean would keep the five). With no link
    moved, there is no scale and nothing goes."""
    X = rows([2, 1, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1])
    options = dict(links="all", bias=False, learning_rate=1.0, average=False, epochs=1,
                   shuffle=False)
    net = snowpy.Network("perceptron", discard=None, **options).fit(X, ["a", "b", "a", "c"])
    assert net.coef_.tolist() == [[0, -1, -1], [-2, 0, 0], [-2, -1, 0]] and net.n_links_ == 9
    pruned = snowpy.Network("perceptron", discard=0.8, **options).fit(X, ["a", "b", "a", "c"])
    assert pruned.coef_.tolist() == [[0, 0, 0], [-2, 0, 0], [-2, 0, 0]]
    assert pruned.n_links_ == 2
    still = snowpy.Network("perceptron", discard=None, **options)
    still.partial_fit(rows([1, 1, 0], [0, 0, 1]), ["a", "a"])  # one target, never wrong
    assert still.n_links_ == 3 and not still.coef_.any()
    still.set_params(discard=0.5)
    assert still.prune() == 0 and still.n_links_ == 3


def test_the_discard_scale_is_summed_in_one_order_however_the_links_lie():
    """The scale of a rule starting at zero is a mean over the links, and a sum's rounding
    depends on its order (the same 10 million deltas of 20 Newsgroups average to two
    numbers one unit in the last place apart in two orders): each target's links are
    summed rows in order, the targets' sums in target order, whether the pool appended
    the links as they came (one thread) or learned them in parts (several, each part
    dropping its negligible links before they are put together)."""
    rng = np.random.default_rng(11)
    X = sp.csr_matrix((rng.random((400, 300)) < 0.03) * rng.random((400, 300)))
    y = [f"label{k:02d}" for k in rng.integers(0, 20, size=400)]
    kept = snowpy.Network("perceptron", discard=None, n_jobs=1, epochs=2).fit(X, y)
    store = kept.engine_.store
    assert not all(np.all(np.diff(store.target[store.start[r]:store.start[r] +
                                                 store.size[r]]) > 0)
                   for r in range(store.n_rows) if not store.dense[r])  # (appended)
    layout = store.exact()
    weights = store.effective(averaged=True)[layout["slots"]] + store.absent - store.absent
    sums, moved = [0.0] * store.n_targets, 0
    for target, weight in zip(layout["target"].tolist(), weights.tolist()):
        if weight != 0.0:
            sums[target] += abs(weight)  # (rows in order, one target at a time)
            moved += 1
    total = float(np.sum(np.array(sums)))
    scale = kept.engine_.discard_scale([store], averaged=True)
    assert scale == total / moved and moved > 0
    dropped = store.prune(threshold=0.5 * scale, averaged=True)
    assert dropped > store.n_links // 4  # (a share that drops many links)
    for jobs in (1, 2):
        net = snowpy.Network("perceptron", discard=0.5, n_jobs=jobs, epochs=2).fit(X, y)
        assert net.n_links_ == store.n_links
        np.testing.assert_array_equal(net.engine_.store.links_csr(averaged=True).toarray(),
                                      store.links_csr(averaged=True).toarray())


@pytest.mark.parametrize("links", ["positive", "signed", "touched", "all"])
def test_each_policy_round_trips_through_a_model_file_with_mmap(tmp_path, links):
    rng = np.random.default_rng(2)
    X = sp.csr_matrix((rng.random((200, 300)) < 0.05).astype(float))
    y = rng.integers(0, 5, 200)
    net = snowpy.Network("balanced-winnow", links=links, epochs=3, eligibility=2,
                         discard=0.1).fit(X, y)
    path = net.save(tmp_path / "m.snowpy")
    for mmap in (False, True):
        loaded = snowpy.load(path, mmap=mmap)
        np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))
        assert loaded.links == links and loaded.n_links_ == net.n_links_
    loaded.partial_fit(X[:20], y[:20])
    net.partial_fit(X[:20], y[:20])
    np.testing.assert_array_equal(loaded.decision_function(X), net.decision_function(X))


def test_signed_links_carry_negative_evidence():
    """Balanced Winnow, w+ = 2, w- = 1 (effective 1), theta 1.5, alpha 1.5, beta 0.5. A
    feature never seen with a target gets a link ("signed") when a demotion of that target
    takes it below zero: negative evidence that "positive" cannot hold."""
    options = dict(initial_weight=2.0, negative_initial_weight=1.0, theta=1.5, alpha=1.5,
                   beta=0.5, bias=False, average=False, epochs=1, shuffle=False)
    nets = {links: snowpy.Network("balanced-winnow", links=links, **options)
            for links in ("positive", "signed")}
    for net in nets.values():
        # 1 (a): link x0-a at 1; 1 < 1.5: promote, w+ 3, w- 0.5: 2.5
        net.fit(rows([1, 0, 0]), ["a"])
        # 2 (b): a has no link to x1: 0, right; link x1-b at 1 < 1.5: promote to 2.5
        net.partial_fit(rows([0, 1, 0]), ["b"])
        # 3 (b): a = 2.5 >= 1.5: demote x0-a (1.5, 0.75): 0.75; "signed" also demotes the
        #    missing x1-a from (2, 1) to (1, 1.5): -0.5 < 0, a link. b: x0-b at 1, 3.5: right
        net.partial_fit(rows([1, 1, 0]), ["b"])
    assert nets["positive"].coef_.tolist() == [[0.75, 0.0, 0.0], [1.0, 2.5, 0.0]]
    assert nets["signed"].coef_.tolist() == [[0.75, -0.5, 0.0], [1.0, 2.5, 0.0]]
    assert (nets["positive"].n_links_, nets["signed"].n_links_) == (3, 4)
    # x1 alone: evidence against "a" only where the link exists
    assert nets["positive"].target_scores([[0, 1, 0]])[0, 0] == -1.5
    assert nets["signed"].target_scores([[0, 1, 0]])[0, 0] == -2.0


@pytest.mark.corpus
@pytest.mark.parametrize("rule", BUILTIN_RULES)
def test_touched_predicts_exactly_like_all_on_a_real_corpus(corpora, rule):
    """The "touched" policy stores links only where weights moved, and predicts bit for bit
    like the full table (SNoW -s f), for every built-in rule (SMS Spam, 1-2 grams)."""
    assert rule in list_rules()
    from snowpy import corpora as registry

    data = registry.load("sms-spam", path=corpora / "sms_spam_collection.tar.gz")
    texts, labels = data.texts[:3000], data.labels[:3000]
    X = snowpy.Featurizer(ngrams=(1, 2), bits=20).transform(texts)
    full = snowpy.Network(rule, links="all", epochs=2, discard=None).fit(X[:2000],
                                                                         labels[:2000])
    touched = snowpy.Network(rule, links="touched", epochs=2, discard=None).fit(X[:2000],
                                                                                labels[:2000])
    np.testing.assert_array_equal(touched.decision_function(X[2000:]),
                                  full.decision_function(X[2000:]))
    assert touched.mistakes_ == full.mistakes_
    assert touched.n_links_ <= full.n_links_


@pytest.mark.parametrize("rule", ["balanced-winnow", "perceptron", "naive-bayes"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("average", [True, False])
def test_a_few_documents_score_through_their_links_alone_alike(rule, precision, average):
    """A few documents of a large network are scored from their own links' weights, each
    computed as it is read (a loaded model's other links never touched), not from a table
    of every link's: the scores are the table's bit for bit, for every rule, precision
    and averaging; one of many documents builds the table, and keeps it."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix((rng.random((400, 3000)) < 0.02).astype(float))
    y = rng.integers(0, 7, 400)
    net = snowpy.Network(rule, precision=precision, average=average, links="all",
                         epochs=2).fit(X, y)
    engine, one = net.engine_, X[:1]
    np.testing.assert_array_equal(engine.scores(X, averaged=average, table=False),
                                  engine.scores(X, averaged=average, table=True))
    expected = engine.scores(one, averaged=average, table=True)
    engine.cache.invalidate()
    np.testing.assert_array_equal(net.target_scores(one), expected)
    assert not engine.cache.effective  # (one document: no table built)
    net.target_scores(X)
    assert engine.cache.effective  # (many: the table, kept)


@pytest.mark.parametrize("percent,kept", [
    (20, {-1}),          # ceil(0.2 * 5) = 1 link: the bias (4 positive examples)
    (30, {-1, 0, 1}),    # ceil(0.3 * 5) = 2: the bias and x0, and x1, tied with x0 at 3
    (41, {-1, 0, 1}),    # ceil(0.41 * 5) = 3: no tie at the cut
    (61, {-1, 0, 1, 2, 3}),  # ceil(0.61 * 5) = 4: x2, and x3 tied with it at 1
])
def test_eligibility_by_percent_rounds_its_quota_up_and_keeps_ties(percent, kept):
    """Target a's links, by how often their feature was active in its positive examples:
    bias 4, x0 3, x1 3, x2 1, x3 1. The quota is ceil(p% of its links); every link as
    active as the last one in the quota is kept too (ties kept, as the docstring says)."""
    X = rows([1, 1, 1, 0, 0], [1, 1, 0, 1, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0],
             [0, 0, 0, 0, 1])
    labels = ["a", "a", "a", "a", "b"]
    # (Winnow: every link weighs something, so that each shows in the links)
    net = snowpy.Network("winnow", links="positive", eligibility=f"percent:{percent}",
                         epochs=1, shuffle=False).fit(X, labels)
    assert {f for f, label in links_of(net) if label == "a"} == kept


def test_a_network_of_few_features_hashes_them_and_of_many_keeps_a_table():
    """The network's rows by feature id: hashed while the map holds at most one key in
    DIRECT_SHARE of its width (a small corpus pays for no table of 2**22 numbers), then
    a table of a number per key; the rows are those of first appearance throughout, and
    an id at or past the width is refused alike in both."""
    from snowpy.hashmap import DIRECT_SHARE, FeatureMap

    width = 1 << 22
    fmap = FeatureMap(narrow=True, width=width)
    ids = np.random.default_rng(3).permutation(width)[: width // DIRECT_SHARE + 500]
    first = fmap.rows(ids[:1000].astype(np.int32), insert=True)
    assert not fmap.direct and fmap.nbytes < 64 * 1024  # (a table would be 16 MiB)
    assert first.tolist() == list(range(1, 1001))
    with pytest.raises(ValueError, match=f"feature id {width} is beyond the map's {width}"):
        fmap.rows(np.array([5, width], np.int32), insert=True)
    rest = fmap.rows(ids.astype(np.int32), insert=True)
    assert fmap.direct and fmap.nbytes >= 4 * width
    assert rest.tolist() == list(range(1, ids.size + 1))  # (the first 1,000 kept theirs)
    assert fmap.row_ids.tolist() == ids.tolist()
    with pytest.raises(ValueError, match=f"feature id {width} is beyond the map's {width}"):
        fmap.rows(np.array([5, width], np.int32), insert=True)
    absent = int(np.setdiff1d(np.arange(1000), ids)[0])
    assert fmap.rows(np.array([ids[7], absent], np.int32), insert=False,
                     unseen=-1).tolist() == [8, -1]


@pytest.mark.parametrize("made", ["hashed", "table", "adopted"])
def test_a_feature_looked_up_beyond_the_width_is_unseen_and_refused_on_insert(made):
    """A map of features 0 .. width - 1, whatever its form: an id outside them is a
    feature never seen when looked up, and refused when learned."""
    from snowpy.hashmap import FeatureMap

    fmap = FeatureMap(narrow=True, width=100, direct=made == "table")
    if made == "adopted":
        assert fmap.adopt(np.arange(10, dtype=np.int32))
    else:
        fmap.rows(np.arange(10, dtype=np.int32), insert=True)
    assert fmap.rows(np.array([5, 500, 100]), insert=False, unseen=-1).tolist() == [6, -1, -1]
    with pytest.raises(ValueError, match="feature id 500 is beyond the map's 100"):
        fmap.rows(np.array([5, 500]), insert=True)


def test_a_row_grown_in_any_order_is_laid_out_by_target():
    """One network, one exact layout: a feature met with 40 of 100 labels in a shuffled
    order gets its links in that order (a sparse row: fewer than half the targets), and
    its model file's row lists them by target, as the same network learned in another
    order does."""
    rng = np.random.default_rng(3)
    labels = rng.permutation(100)[:40]
    X = sp.csr_matrix(np.ones((40, 1)))
    layouts = []
    for order in (labels, np.sort(labels)[::-1]):
        net = snowpy.Network("perceptron", links="positive", bias=False, epochs=1,
                             shuffle=False, average=False, n_jobs=1)
        net.partial_fit(X, order, classes=np.arange(100))
        store = net.engine_.store
        row = store.rows[1]  # (row 0 is the bias's)
        assert row["dense"] == 0 and row["size"] == 40
        pooled = store.target[row["start"]:row["start"] + 40]
        assert pooled.tolist() == order.tolist()  # (as they came)
        layouts.append(store.exact(slots=False)["target"].tolist())
    assert layouts[0] == layouts[1] == sorted(labels.tolist())


def test_a_maps_rows_written_over_the_ids_they_number():
    """``FeatureMap.rows(ids, out=ids)``: each id's row written over it (a calibration
    fold's rows, made for its network: no second array of them), the rows a fresh array
    would hold."""
    from snowpy.hashmap import FeatureMap

    ids = np.array([70, 9, 70, 3, 9], np.int32)
    rows = FeatureMap(width=1 << 22).rows(ids, insert=True, out=ids)
    assert rows is ids and ids.tolist() == [1, 2, 1, 3, 2]


def test_a_calibration_folds_rows_are_written_over_in_its_own_copy_only():
    """A fold's network writes its rows over the indices of the fold's own rows (made for
    it), never over the caller's: the caller's matrix is as it was given."""
    rng = np.random.default_rng(3)
    X = sp.random(60, 500, density=0.05, format="csr", random_state=4, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    before = X.indices.copy()
    y = rng.choice(["a", "b"], size=60)
    snowpy.Network("perceptron", calibrate="cv:3", epochs=2).fit(X, y)
    np.testing.assert_array_equal(X.indices, before)


@pytest.mark.parametrize("width", [1 << 22, 1 << 40])  # (a direct table; a hash)
def test_a_packed_feature_map_keeps_its_numbers_in_the_memory_of_its_keys(width):
    """``FeatureMap.pack``: the keys alone (the table let go), each with its number; a few
    found by bisection, many or a new key making the table again, with the same numbers
    and the next new key numbered on; the numbers in key order read as held."""
    from snowpy.hashmap import FeatureMap

    rng = np.random.default_rng(5)
    ids = rng.choice(min(width, 1 << 30), 200_000, replace=False).astype(np.int64)
    fmap = FeatureMap(width=width)
    numbers = fmap.rows(ids, insert=True)
    by_key = fmap.numbers_by_key()
    before = fmap.nbytes
    held = (4 if fmap.narrow else 8) + 4  # (a key and its number)
    fmap.pack()
    assert fmap.nbytes <= held * ids.size < before
    assert fmap.numbers_by_key().tolist() == by_key.tolist()
    assert fmap.row_ids.tolist() == ids.tolist()
    assert fmap.rows(ids[:10], insert=False).tolist() == numbers[:10].tolist()
    assert fmap.nbytes <= held * ids.size  # (a few looked up: no table made)
    assert fmap.rows(ids, insert=False).tolist() == numbers.tolist()
    fmap.pack()
    new = np.setdiff1d(np.arange(10, dtype=np.int64), ids)[:1]
    assert fmap.rows(np.concatenate([ids[:3], new]), insert=True).tolist() == \
        numbers[:3].tolist() + [ids.size + 1]
