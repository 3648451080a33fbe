"""The shape of snowpy, checked on every run.

The import graph: no circles, and dependencies run down the floors. Every import
counts, module level or inside a function; those under ``if TYPE_CHECKING:`` must
run down the floors too. ``docs/architecture.md`` draws the floors.

The objects (issue 30): no object reaches into another's private state, no function
runs over 100 lines or takes over 12 parameters; each exception is listed below with
its reason, and a new one fails until it is listed.
``../shared/tools/code_metrics.py snowpy`` prints the same figures.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "snowpy"

#: Floors, lowest first: a module may import its own floor and those below.
FLOORS = [
    ("base", ["_core", "_rows", "_version", "_lazy", "_atomic", "exceptions", "_validation",
              "progress", "hashmap", "model_file", "model_schema", "model_kinds",
              "metrics", "plots", "calibration", "base", "presets", "declared"]),
    ("plugin host", ["params", "hookspecs", "plugins", "numba_kernels"]),
    ("building blocks", ["rules", "text", "corpora", "network"]),
    ("estimators", ["classifier", "files", "explanation",
                    "explanation_html"]),
    ("uses of estimators", ["persistence", "experiments", "testing", "integrations",
                            "distributed", "serving", "tuning", "training"]),
    ("command line", ["cli", "__main__"]),
]
#: The building blocks stand side by side: none imports another, but for what a plugin
#: provides (its record and kernel contract), which lives beside the built-in ones: the
#: network runs every rule through the rules' contract, and the plugin host names the
#: records for its hooks' types only (it imports no building block).
SIDE_BY_SIDE = ["rules", "text", "corpora", "network"]
CONTRACTS = {"snowpy.rules.spec", "snowpy.rules.kernels",
             "snowpy.text.extractors.spec", "snowpy.corpora.spec", "snowpy.corpora.documents"}


def _modules(package: Path) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, typing: bool = False) -> None:
        self.module, self.is_package, self.found = module, is_package, set()
        self.typing = typing

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if not self.typing and (
                (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
                or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(a.name for a in node.names if a.name.split(".")[0] == "snowpy")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            here = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
            base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""]).strip(".")
        else:
            base = node.module or ""
        if base.split(".")[0] == "snowpy":
            self.found.add(base)
            self.found.update(f"{base}.{a.name}" for a in node.names)


def _graph(package: Path = PACKAGE, typing: bool = False) -> dict[str, set[str]]:
    """Who imports whom; ``typing``: imports made only for the type checker too."""
    modules = _modules(package)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        visitor = _Imports(name, path.name == "__init__.py", typing)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {t for t in map(resolve, visitor.found) if t and t != name}
    return graph


def _part(module: str) -> str:
    """The first component under the package: ``network`` for ``snowpy.network.links``."""
    return module.split(".")[1] if "." in module else ""


def _floor(module: str) -> int | None:
    part = _part(module)
    for number, (_, parts) in enumerate(FLOORS):
        if part in parts:
            return number
    return None


def test_every_module_has_a_floor():
    unplaced = sorted(m for m in _graph() if m != "snowpy" and _floor(m) is None)
    assert not unplaced, f"modules on no floor (add them to FLOORS): {unplaced}"


def test_no_import_circle():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def strong(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in graph:
        if module not in index:
            strong(module)
    assert not circles, f"import circles: {circles}"


def _wrong_way(graph: dict[str, set[str]], typing: bool = False) -> list[str]:
    wrong = []
    for module, targets in graph.items():
        here = _floor(module)
        if here is None:  # the package's face re-exports lazily
            continue
        for target in targets:
            there = _floor(target)
            if target in CONTRACTS and (here == there == 2 or (typing and here == 1)):
                continue
            if there is not None and there > here:
                wrong.append(f"{module} -> {target} ({FLOORS[here][0]} imports "
                             f"{FLOORS[there][0]})")
            elif there == here == 2 and _part(module) != _part(target) \
                    and _part(target) in SIDE_BY_SIDE:
                wrong.append(f"{module} -> {target} (building blocks stand side by side)")
    return sorted(wrong)


def test_imports_run_down_the_floors():
    wrong = _wrong_way(_graph())
    assert not wrong, "imports that run the wrong way:\n" + "\n".join(wrong)


def test_type_only_imports_run_down_the_floors_too():
    """A type named from a floor above is a dependency all the same (the plugin host's
    corpus record once named the readers' Document): what both need moves down."""
    wrong = _wrong_way(_graph(typing=True), typing=True)
    assert not wrong, "type-only imports that run the wrong way:\n" + "\n".join(wrong)


def test_the_checker_sees_an_import_inside_a_function(tmp_path):
    """The graph counts imports made inside functions, so a circle hidden there is seen."""
    package = tmp_path / "snowpy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "exceptions.py").write_text("from snowpy import model_file\n")
    (package / "model_file.py").write_text("def f():\n    from snowpy import exceptions\n")
    (package / "plugins.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from snowpy import cli\n")
    (package / "cli.py").write_text("")
    graph = _graph(package)
    assert "snowpy.model_file" in graph["snowpy.exceptions"]
    assert "snowpy.exceptions" in graph["snowpy.model_file"]
    assert graph["snowpy.plugins"] == set()  # type-checking imports do not count here ...
    assert "snowpy.cli" in _graph(package, typing=True)["snowpy.plugins"]  # ... but there


# --------------------------------------------------------------- the objects
#: Names whose underscored attributes are not an object's private state (modules'
#: and compiled helpers' conventions: ``np._NoValue``, ``sys._getframe``).
NOT_OBJECTS = {"self", "cls", "np", "numba", "os", "sys", "sp", "types"}

#: ``file:attribute`` -> why reaching into another object's private attribute is right.
PRIVATE_REACHES: dict[str, str] = {
    "snowpy/network/driver.py:_begin_fit": "a fold network of cross-fitted calibration "
    "is begun and learned through the hooks its kind supplies to fit (its options are "
    "the network's, checked once already: a fit checks its options at most twice, not "
    "once more per fold)",
    "snowpy/network/driver.py:_learn": "as _begin_fit: a fold network learns through "
    "its kind's hook",
}

def private_reaches(package: Path = PACKAGE) -> list[str]:
    """``file:line .attribute`` of every ``x._attribute`` where ``x`` is not ``self``."""
    reaches = []
    for path in sorted(package.rglob("*.py")):
        where = str(path.relative_to(package.parent))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") \
                    and not (isinstance(node.value, ast.Name) and node.value.id in NOT_OBJECTS):
                reaches.append(f"{where}:{node.lineno} .{node.attr}")
    return reaches


def test_no_object_reaches_into_anothers_private_state():
    unlisted = [r for r in private_reaches()
                if f"{r.split(':')[0]}:{r.split('.')[-1]}" not in PRIVATE_REACHES]
    assert not unlisted, ("private attributes of other objects (make the protocol public, "
                          "or list the reach with its reason):\n" + "\n".join(unlisted))
    assert len(PRIVATE_REACHES) <= 20


def test_the_checker_sees_a_reach(tmp_path):
    package = tmp_path / "snowpy"
    package.mkdir()
    (package / "a.py").write_text("def f(other):\n    return other._secret + self_._x\n"
                                  "class A:\n    def g(self):\n        return self._mine\n")
    assert private_reaches(package) == ["snowpy/a.py:2 ._secret", "snowpy/a.py:2 ._x"]


def test_a_network_is_a_thin_estimator_over_its_engine():
    """A network shows a user its estimator protocols (scikit-learn's and River's),
    SNoW's views and its engine, over a chain of four classes counting ``object``; what
    it learned and the one-example operations on it are its engine's, the same
    protocol for every kind of network (a plugin's too: the kernel Perceptron's tests)."""
    from snowpy import Cloud, Network
    from snowpy.network.cloud import CloudEngine
    from snowpy.network.engine import Engine, OneExample

    assert [c.__name__ for c in Network.__mro__] == ["Network", "NetworkKind", "Estimator",
                                                     "object"]
    public = {name for name in dir(Network) if not name.startswith("_")}
    assert len(public) <= 35, sorted(public)
    one_example = {"check_label", "score_one", "learn_one", "score_text", "learn_text",
                   "label_of", "probabilities_of"}
    assert one_example <= set(dir(OneExample))
    for engine in (Engine, CloudEngine):
        assert OneExample in engine.__mro__
    for kind in (Network, Cloud):  # (River's learn_one is the estimator's)
        assert not (one_example - {"learn_one"}) & set(dir(kind)), kind


def test_snowpy_train_reaches_the_compiled_epoch_in_a_few_frames(tmp_path, monkeypatch):
    """A reader follows `snowpy train` to the compiled epoch through at most 9 Python
    frames in 5 files, from the thread the command trains on (``cli/progress.py``): the
    command, the classifier, the network, its driver (scikit-learn's SGDClassifier.fit
    reaches _plain_sgd in about 7 frames in 2 files). Counted at the defaults, where the
    first compiled epoch is a calibration fold's."""
    import traceback

    from typer.testing import CliRunner

    import snowpy.network.driver as driver
    from snowpy.cli import app
    from snowpy.corpora import demo_path

    paths: list[list[tuple[str, str]]] = []
    real = driver.run

    def spy(*args, **kwargs):
        if not paths:
            stack = traceback.extract_stack()[:-1]
            start = max(i for i, frame in enumerate(stack)
                        if frame.filename.endswith(str(Path("cli", "progress.py"))))
            paths.append([(frame.filename, frame.name) for frame in stack[start:]])
        return real(*args, **kwargs)

    monkeypatch.setattr(driver, "run", spy)
    result = CliRunner().invoke(app, ["train", str(demo_path("train")), "-o",
                                      str(tmp_path / "m.snowpy"), "-q", "--threads", "1"])
    assert result.exit_code == 0, result.output
    frames = paths[0]
    where = [f"{Path(name).parent.name}/{Path(name).name}:{function}"
             for name, function in frames]
    assert len(frames) <= 9 and len({name for name, _ in frames}) <= 5, where
    assert where[-1] == "network/driver.py:run"  # (a part's run of the compiled epoch)
