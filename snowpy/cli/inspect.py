"""``snowpy inspect MODEL``: what a model is, and its heaviest features by name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from snowpy.cli.common import counted, echo_json, given_options, handles_errors, model_key
from snowpy.cli.reading import (
    Decode,
    Encoding,
    Header,
    LabelColumn,
    LabelField,
    TextColumn,
    TextField,
    read_as_trained,
)
from snowpy.exceptions import ConfigurationError


def _parts(model: Any) -> tuple[Any, Any, Any]:
    """``(classifier or None, network, featurizer or None)``."""
    from snowpy.model_kinds import kind_of

    if kind_of(model) == "classifier":
        return model, model.network_, model.featurizer_
    return None, model, None


def _names(featurizer: Any, ids: Any = None) -> dict[int, list[str]]:
    """Names of ``ids`` (all when None), when the model kept them."""
    if featurizer is None or not featurizer.keep_names:
        return {}
    return featurizer.names_ if ids is None else featurizer.names_of(ids)


def _recover_names(model: Any, corpus: str, split: str | None, top: int, every: bool,
                   format: str | None, layout: Any) -> None:
    """Name the features to be shown (all of them for an export) from CORPUS, read as
    ``format`` and ``layout`` say."""
    from snowpy import corpora

    classifier, net, featurizer = _parts(model)
    if featurizer is None:
        raise ConfigurationError("--corpus names the features of a classifier; this model "
                                 "is a network of numbered features")
    wanted = net.feature_ids_ if every else sorted(
        {int(f) for _, _, ids, weights in _targets(net)
         for f in ids[(-weights).argsort(kind="stable")[:top]]})
    texts = corpora.open(corpus, split=split, format=format, layout=layout, prefer="train",
                         on_error="skip").read().texts
    featurizer.recover_names(texts, wanted)


def _targets(net: Any) -> Iterator[tuple[Any, float | None, Any, Any]]:
    """Per target: its label, its bias's weight (None without a link to the bias), and
    the ids of the features linked to it with their weights."""
    links = net.engine_.effective_links().tocsc()
    links.sort_indices()
    for t, label in enumerate(net.classes_.tolist()):
        column = slice(links.indptr[t], links.indptr[t + 1])
        rows, weights = links.indices[column], links.data[column]
        features = rows > 0
        yield (label, float(weights[0]) if rows.size and rows[0] == 0 else None,
               net.feature_ids_[rows[features] - 1], weights[features])


def describe(model: Any, top: int) -> dict[str, Any]:
    """Everything ``inspect`` shows, as a dict."""
    from snowpy.declared import NETWORK
    from snowpy.network.options import bias_strength

    classifier, net, featurizer = _parts(model)
    engine = net.engine_
    store = engine.store
    classes = net.classes_.tolist()
    heaviest: dict[str, Any] = {}
    biases = {}
    for label, bias, ids, weights in _targets(net):
        biases[str(label)] = float(store.absent) if bias is None else bias
        best = (-weights).argsort(kind="stable")[:top]
        heaviest[str(label)] = [(int(ids[i]), float(weights[i])) for i in best]
    names = _names(featurizer, sorted({f for items in heaviest.values() for f, _ in items}))
    heaviest = {label: [{"feature": f, "weight": w, "names": names.get(f, [])}
                        for f, w in items] for label, items in heaviest.items()}
    return {
        "kind": "classifier" if classifier else "network",
        "rule": net.rule, "rule_params": net.rule_params_,
        "options": {name: getattr(net, name) for name in NETWORK if name != "rule"},
        "front_end": featurizer.get_params() if featurizer is not None else None,
        "classes": classes, "multilabel": net.multilabel_,
        "features_seen": int(store.n_rows - 1), "n_features": int(net.n_features_in_),
        "links": int(store.n_links), "absent_weight": float(store.absent),
        "names_kept": bool(featurizer is not None and featurizer.keep_names),
        "training": {"epochs": len(net.mistakes_), "mistakes_per_epoch": net.mistakes_,
                     "updates_per_epoch": net.updates_, "examples": net.n_examples_seen_,
                     "promotions": engine.promotions.tolist(),
                     "demotions": engine.demotions.tolist(),
                     "overflows": engine.overflows, "underflows": engine.underflows},
        "bias_strength": bias_strength(net.bias), "theta": float(net.rule_params_["theta"]),
        "bias_weight": biases,
        "calibration": net.calibration_.header() if net.calibration_ is not None else None,
        "inference_only": bool(store.frozen),
        "top_features": heaviest,
    }


def export(model: Any, path: Path, progress: Any = None) -> int:
    """Every link, per target: JSON (``.json``) or SNoW-like text (other suffixes).

    The size is proportional to the links; ``progress(done, total)`` is called
    after each target. Returns the links written.
    """
    import orjson

    from snowpy.network.options import bias_strength

    classifier, net, featurizer = _parts(model)
    names = _names(featurizer)
    classes = net.classes_.tolist()
    promotions, demotions = net.engine_.promotions.tolist(), net.engine_.demotions.tolist()
    absent = float(net.engine_.store.absent)
    theta = float(net.rule_params_["theta"])
    head = {"rule": net.rule, "rule_params": net.rule_params_, "links": net.links,
            "absent_weight": absent, "theta": theta, "bias_strength": bias_strength(net.bias)}
    as_json = path.suffix.lower() == ".json"
    with open(path, "wb") as out:
        if as_json:
            out.write(orjson.dumps(head)[:-1] + b', "targets": [\n')
        else:
            out.write(f"# snowpy network: rule {net.rule} {net.rule_params_}; links "
                      f"{net.links}, a missing link weighs {absent:.6g}; theta {theta:g}\n"
                      .encode())
        written = 0
        for t, (label, bias, ids, weights) in enumerate(_targets(net)):
            written += len(weights) + (bias is not None)
            bias = absent if bias is None else bias
            feature_ids, values = ids.tolist(), weights.tolist()
            if as_json:
                entry = {"label": label, "bias": bias, "promotions": promotions[t],
                         "demotions": demotions[t], "weights": [
                             {"feature": f, "weight": w, **({"names": names[f]} if f in names
                                                            else {})}
                             for f, w in zip(feature_ids, values)]}
                out.write((b",\n" if t else b"") + orjson.dumps(entry))
            else:
                lines = [f"target {t} {label} bias {bias:.6g} promotions {promotions[t]} "
                         f"demotions {demotions[t]} links {len(values)}"]
                for f, w in zip(feature_ids, values):
                    name = " | ".join(names.get(f, []))
                    lines.append(f"  {f} {w:.6g}{' ' + name if name else ''}")
                out.write(("\n".join(lines) + "\n").encode("utf-8"))
            if progress is not None:
                progress(t + 1, len(classes))
        if as_json:
            out.write(b"\n]}\n")
    return written


@handles_errors
def inspect(
    ctx: typer.Context,
    model: Annotated[Path, typer.Argument(help="model file")],
    top: Annotated[int, typer.Option(min=0, help="heaviest features shown per class")] = 10,
    export_to: Annotated[Path | None, typer.Option(
        "--export", help="write every link to .json, or SNoW-like text (.txt)")] = None,
    json_output: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    corpus: Annotated[str | None, typer.Option(
        help="name features by rehashing this corpus (for a model trained without "
             "--keep-names): a path, a registered corpus or -")] = None,
    split: Annotated[str | None, typer.Option(help="split of --corpus")] = None,
    format: Annotated[str | None, typer.Option(
        help="format of --corpus (default: as the model's training corpus was read, else "
             "guessed)")] = None,
    encoding: Encoding = None,
    decode: Decode = "strict",
    label_column: LabelColumn = None,
    text_column: TextColumn = None,
    header: Header = None,
    label_field: LabelField = None,
    text_field: TextField = None,
) -> None:
    """Show MODEL: rule, parameters, classes, training figures, heaviest features."""
    from snowpy import corpora, load
    from snowpy.cli.common import console as make_console

    console = make_console(stderr=json_output)
    loaded = load(model, mmap=True, key=model_key())
    if corpus is not None:
        layout = corpora.Layout(encoding, decode, label_column, text_column or [], header,
                                label_field, text_field or [])
        layout = read_as_trained(layout, getattr(loaded, "read_with_", None), corpus, format,
                                 given_options(ctx), quiet=json_output)
        _recover_names(loaded, corpus, split, top, export_to is not None, format, layout)
    from snowpy.model_kinds import kind_of

    classifier, network, _ = _parts(loaded)
    kind = kind_of(network)
    if kind not in ("network", "cloud"):  # a learner's network: what it says of itself
        _show_described(console, model, kind, classifier is not None, network, json_output,
                        export_to)
        return
    if kind == "network":
        written = _export(loaded, export_to) if export_to is not None else 0
        info = describe(loaded, top)
        if json_output:
            echo_json(info)
            return
        _show(console, model, info, corpus)
        if export_to is not None:
            console.print(f"exported {written:,} links to {export_to}")
        return
    # a cloud (snowpy train --rule winnow+perceptron): its members one by one, each as the
    # model alone (a classifier keeps its front end)
    cloud = network
    views = list(cloud.networks_) if classifier is None else \
        [classifier.with_network(member) for member in cloud.networks_]
    members = [describe(view, top) for view in views]
    confidence = {str(label): [round(float(c), 6) for c in column]
                  for label, column in zip(cloud.classes_, cloud.confidence_.T)}
    if json_output:
        echo_json({"kind": "cloud", "rule": cloud.rule, "members": members,
                   "confidence": confidence})
        return
    console.print(f"[bold]{model}[/bold]: a cloud of {len(members)} rules ({cloud.rule}); "
                  "confidence of each member per label:")
    for label, values in confidence.items():
        console.print(f"  {label}: " + ", ".join(f"{m['rule']} {v:.3f}"
                                                 for m, v in zip(members, values)))
    for k, (view, info) in enumerate(zip(views, members)):
        console.print(f"\n[bold]member {k}[/bold]")
        _show(console, model, info, corpus)
        if export_to is not None:
            target = export_to.with_name(f"{export_to.stem}.member{k}{export_to.suffix}")
            console.print(f"exported {_export(view, target):,} links to {target}")


def _export(loaded: Any, export_to: Path) -> int:
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("exporting", total=len(loaded.classes_))
        return export(loaded, export_to,
                      progress=lambda done, total: bar.update(task, completed=done))


def _show(console: Any, model: Path, info: dict[str, Any], corpus: str | None) -> None:
    from snowpy.cli.common import table as Table

    console.print(f"[bold]{model}[/bold]: {info['kind']}, rule {info['rule']} "
                  f"{info['rule_params']}")
    console.print(f"{len(info['classes'])} classes, {info['links']:,} links "
                  f"({info['options']['links']}) over {info['features_seen']:,} features seen of "
                  f"{info['n_features']:,}; {info['training']['examples']:,} examples learned in "
                  f"{counted(info['training']['epochs'], 'epoch')}; mistakes per epoch "
                  f"{info['training']['mistakes_per_epoch']}")
    console.print(f"activation = bias weight x {info['bias_strength']:g} + sum of linked "
                  f"weights; a target claims an example at theta = {info['theta']:g}")
    if info["calibration"]:
        console.print(f"calibrated: {info['calibration']}")
    if info["inference_only"]:
        console.print("inference only: effective weights, no training state")
    if info["kind"] == "classifier" and not info["front_end"]["keep_names"] and corpus is None:
        console.print("features are numbered (the model keeps no names): add --corpus CORPUS "
                      "to name them from the text they came from")
    for label, features in info["top_features"].items():
        title = f"{label} (bias weight {info['bias_weight'][label]:.4g})"
        table = Table(title=title, title_justify="left",  # (a title on one line)
                      min_width=min(len(title), console.width))
        table.add_column("feature", overflow="fold")
        table.add_column("weight", justify="right")
        for item in features:
            shown = " | ".join(item["names"]) if item["names"] else f"#{item['feature']}"
            table.add_row(shown, f"{item['weight']:.4g}")
        console.print(table)


def _show_described(console: Any, model: Path, kind: str, classifier: bool, network: Any,
                    json_output: bool, export_to: Path | None) -> None:
    if export_to is not None:
        raise ConfigurationError(f"a {kind} network has no links to export; what it "
                                 "learned is in the arrays of the model file")
    info = {"kind": "classifier" if classifier else f"{kind} network", **network.describe()}
    if json_output:
        echo_json(info)
        return
    console.print(f"[bold]{model}[/bold]: {info.pop('kind')}, rule {info.pop('rule')} "
                  f"{info.pop('rule_params')}")
    for name, value in info.items():
        console.print(f"{name.replace('_', ' ')}: {value}")
