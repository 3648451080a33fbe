"""The spaCy pipeline component ``snowpy_textcat``, on ``spacy.blank("en")`` (no model
download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

spacy = pytest.importorskip("spacy")
from spacy.training import Example  # noqa: E402

import snowpy  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def rows(split: str) -> list[tuple[str, str]]:
    path = ROOT / "corpora" / "demo" / f"{split}.tsv"
    return [tuple(line.split("\t", 1)) for line in path.read_text().splitlines() if line]


LABELS = sorted({label for label, _ in rows("train")})


def examples(nlp, split: str, multilabel: bool = False) -> list[Example]:
    out = []
    for label, text in rows(split):
        cats = {c: float(c == label) for c in LABELS}
        if multilabel:
            cats["money"] = float(label in ("billing", "account"))
        out.append(Example.from_dict(nlp.make_doc(text), {"cats": cats}))
    return out


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("snowpy_textcat")  # by name: the spacy_factories entry point
    train = examples(nlp, "train")
    nlp.initialize(lambda: train)
    for _ in range(5):
        losses = nlp.update(train)
    return nlp, losses


def test_the_component_trains_from_examples_and_fills_cats(trained):
    nlp, losses = trained
    assert losses["snowpy_textcat"] == 0.0  # no mistakes left in the last pass
    doc = nlp("I was charged twice on my card this month, please refund")
    assert set(doc.cats) == set(LABELS) and abs(sum(doc.cats.values()) - 1) < 1e-9
    assert max(doc.cats, key=doc.cats.get) == "billing" and doc.cats["billing"] > 0.5
    scores = nlp.evaluate(examples(nlp, "test"))
    assert scores["cats_score"] > 0.9  # measured 0.950 (macro F)


def test_it_survives_to_disk_and_spacy_load_without_pickle(trained, tmp_path):
    nlp, _ = trained
    nlp.to_disk(tmp_path / "pipeline")
    saved = sorted(p.name for p in (tmp_path / "pipeline" / "snowpy_textcat").iterdir())
    assert saved == ["cfg.json", "model.snowpy"]
    loaded = spacy.load(tmp_path / "pipeline")
    texts = [text for _, text in rows("test")[:30]]
    assert [d.cats for d in loaded.pipe(texts)] == [d.cats for d in nlp.pipe(texts)]
    copy = spacy.blank("en").add_pipe("snowpy_textcat")
    copy.from_bytes(nlp.get_pipe("snowpy_textcat").to_bytes())
    assert copy.labels == tuple(LABELS)
    doc = nlp.make_doc(texts[0])
    assert copy(doc).cats == nlp(texts[0]).cats


def test_it_loads_a_snowpy_model_file(tmp_path):
    train = rows("train")
    clf = snowpy.SnowClassifier(calibrate="cv").fit([t for _, t in train],
                                                    [lab for lab, _ in train])
    clf.save(tmp_path / "m.snowpy")
    nlp = spacy.blank("en")
    nlp.add_pipe("snowpy_textcat", config={"model": str(tmp_path / "m.snowpy")})
    text = "the parcel never arrived and tracking shows nothing"
    cats = nlp(text).cats
    probabilities = clf.predict_proba([[t.text for t in nlp.make_doc(text)]])[0]
    np.testing.assert_allclose([cats[c] for c in clf.classes_], probabilities)


def test_spacy_tokens_are_used_as_they_are():
    nlp = spacy.blank("en")
    doc = nlp.make_doc("I don't know")
    featurizer = snowpy.Featurizer(keep_names=True)
    X = featurizer.transform([doc])
    names = {n for found in featurizer.names_of(X.indices).values() for n in found}
    assert "n't" in names and "do" in names  # spaCy's split, not snowpy's (don, t)


def test_multilabel_component():
    nlp = spacy.blank("en")
    nlp.add_pipe("snowpy_textcat", config={"multilabel": True})
    train = examples(nlp, "train", multilabel=True)
    nlp.initialize(lambda: train)
    for _ in range(5):
        nlp.update(train)
    cats = nlp("I was charged twice on my card this month, please refund").cats
    assert cats["billing"] > 0.5 and cats["money"] > 0.5 and cats["shipping"] < 0.5
    assert nlp.evaluate(examples(nlp, "test", multilabel=True))["cats_score"] > 0.85
