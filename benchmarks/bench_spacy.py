"""snowpy's spaCy component against spaCy's own ``textcat`` (bag of words), same run.

Both components sit in a ``spacy.blank("en")`` pipeline and see the same documents,
tokenised once by spaCy's tokenizer; both are trained from the same ``Example``
objects with ``nlp.update`` in batches of 256 for the same number of epochs:

* snowpy: ``nlp.add_pipe("snowpy_textcat")`` (Balanced Winnow, word 1-2 grams,
  progressive calibration);
* spaCy: ``nlp.add_pipe("textcat", config={"model": TextCatBOW.v3 with
  ngram_size 2, exclusive classes})``, the architecture spaCy recommends for speed.

Each is first run once on 300 documents (snowpy's first run compiles its loops,
some 20 s, once per installation). Prints training seconds, prediction docs/s in ``nlp.pipe`` batches of 1,000 (the
component alone, on documents tokenised beforehand, and the whole pipeline from raw
text), accuracy and macro F1 on the test split.

Usage: python benchmarks/bench_spacy.py [--corpora DIR] [--corpus NAME]... [--epochs N]
       [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from common import corpora_dir, machine


def load(name: str, root) -> tuple:
    from snowpy import corpora

    os.environ["SNOWPY_DATA"] = str(root)
    train, test = corpora.load(name, "train"), corpora.load(name, "test")
    return train.texts, train.labels, test.texts, test.labels


def run(kind: str, train, test, epochs: int) -> dict:
    import spacy
    from spacy.training import Example
    from spacy.util import minibatch

    train_texts, train_labels = train
    test_texts, test_labels = test
    labels = sorted(set(train_labels))
    nlp = spacy.blank("en")
    if kind == "snowpy":
        nlp.add_pipe("snowpy_textcat")
    else:
        nlp.add_pipe("textcat", config={"model": {
            "@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": True,
            "ngram_size": 2, "no_output_layer": False, "length": 262144}})
    component = nlp.pipeline[-1][1]
    docs = [nlp.make_doc(t) for t in train_texts]
    examples = [Example.from_dict(doc, {"cats": {c: float(c == y) for c in labels}})
                for doc, y in zip(docs, train_labels)]
    started = time.perf_counter()
    nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(epochs):
        rng.shuffle(examples)
        for batch in minibatch(examples, size=256):
            nlp.update(batch)
    train_seconds = time.perf_counter() - started
    test_docs = [nlp.make_doc(t) for t in test_texts]
    started = time.perf_counter()
    annotated = list(component.pipe(test_docs, batch_size=1000))
    component_seconds = time.perf_counter() - started
    started = time.perf_counter()
    list(nlp.pipe(test_texts, batch_size=1000))
    pipeline_seconds = time.perf_counter() - started
    predicted = [max(doc.cats, key=doc.cats.get) for doc in annotated]
    accuracy = sum(p == y for p, y in zip(predicted, test_labels)) / len(test_labels)
    f1 = []
    for label in labels:
        tp = sum(p == y == label for p, y in zip(predicted, test_labels))
        fp = sum(p == label != y for p, y in zip(predicted, test_labels))
        fn = sum(y == label != p for p, y in zip(predicted, test_labels))
        f1.append(2 * tp / max(2 * tp + fp + fn, 1))
    return {"train_seconds": round(train_seconds, 2),
            "component_docs_per_second": round(len(test_docs) / component_seconds),
            "pipeline_docs_per_second": round(len(test_texts) / pipeline_seconds),
            "accuracy": round(accuracy, 4), "macro_f1": round(sum(f1) / len(f1), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora")
    parser.add_argument("--corpus", action="append")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    root = corpora_dir(args.corpora)
    report = {"machine": machine(), "epochs": args.epochs, "corpora": {}}
    print(f"machine: {machine()}; {args.epochs} epochs, batches of 256")
    for name in args.corpus or ["trec", "20newsgroups"]:
        train_texts, train_labels, test_texts, test_labels = load(name, root)
        rows = {}
        step = max(len(train_texts) // 300, 1)  # a sample of every class
        for kind in ("snowpy", "spacy"):  # warm up: compile (snowpy's first run), load
            run(kind, (train_texts[::step], train_labels[::step]),
                (test_texts[:100], test_labels[:100]), 1)
        for kind in ("snowpy", "spacy"):
            rows[kind] = run(kind, (train_texts, train_labels), (test_texts, test_labels),
                             args.epochs)
        print(f"\n{name}: {len(train_texts):,} train / {len(test_texts):,} test")
        print(f"  {'component':28s} {'train s':>8} {'comp. docs/s':>13} {'pipe docs/s':>12} "
              f"{'acc':>7} {'macroF1':>8}")
        for kind, row in rows.items():
            label = "snowpy_textcat" if kind == "snowpy" else "spaCy textcat (BOW v3)"
            print(f"  {label:28s} {row['train_seconds']:8.1f} "
                  f"{row['component_docs_per_second']:13,} {row['pipeline_docs_per_second']:12,} "
                  f"{row['accuracy']:7.4f} {row['macro_f1']:8.4f}")
        ratio = rows["snowpy"]["component_docs_per_second"] / \
            rows["spacy"]["component_docs_per_second"]
        print(f"  component speed ratio snowpy/spaCy: {ratio:.2f}")
        report["corpora"][name] = rows
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    main()
