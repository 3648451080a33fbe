"""The plugin system: entry points, conflicts, failures, tracing, laziness."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import orjson
import pytest

import snowpy
from snowpy.exceptions import PluginConflictError
from snowpy.plugins import (PluginWarning, get_plugin_manager, get_rule, list_rules,
                            temporary_plugin)

TRAIN = Path(__file__).resolve().parent.parent / "corpora" / "demo" / "train.tsv"


def make_distribution(root: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]):
    """A minimal installed distribution on a path entry: dist-info plus modules."""
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "\n".join(f"{name} = {target}" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[snowpy]\n{lines}\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


def run_python(code: str, path: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, **env)
    if path is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(path), environment.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=environment, timeout=300)


GOOD_PLUGIN = """
    import dataclasses
    from snowpy import hookimpl
    from snowpy.rules.perceptron import PERCEPTRON

    @hookimpl
    def snowpy_update_rules():
        return [dataclasses.replace(PERCEPTRON, name="my-rule", summary="a plugin's rule")]
"""

CLASH_PLUGIN = """
    import dataclasses
    from snowpy import hookimpl
    from snowpy.rules.winnow import WINNOW

    @hookimpl
    def snowpy_update_rules():
        return [dataclasses.replace(WINNOW, summary="an impostor")]
"""


def test_import_snowpy_loads_no_plugin_and_no_numba():
    result = run_python("""
        import sys, snowpy
        loaded = [m for m in sys.modules if m.startswith(("snowpy.rules", "numba", "scipy"))]
        print(loaded)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_a_process_that_uses_no_numba_plugin_never_imports_numba(tmp_path):
    """Training, saving, loading, predicting one example at a time, listing every plugin
    (the installed kernel-Perceptron plugin's rule is written with numba) and the
    command line's train and predict: numba stays out of the process. A network of the
    numba rule brings it in, and only then."""
    corpus = tmp_path / "c.tsv"
    corpus.write_text("a\thello there\nb\tgood bye\n" * 10)
    result = run_python(f"""
        import sys, snowpy
        from snowpy.plugins import list_rules
        clf = snowpy.SnowClassifier(epochs=2).fit(["cheap pills", "lunch now"] * 5,
                                                  ["spam", "ham"] * 5)
        clf.learn_one("cheap lunch", "spam")
        clf.save({str(tmp_path / "m.snowpy")!r})
        loaded = snowpy.load({str(tmp_path / "m.snowpy")!r})
        loaded.predict_proba_one("cheap")
        rules = sorted(list_rules())
        from snowpy.cli import main
        sys.argv = ["snowpy", "train", {str(corpus)!r}, "-o", {str(tmp_path / "c.snowpy")!r}, "-q"]
        try:
            main()
        except SystemExit:
            pass
        print("numba" in sys.modules, "kernel-perceptron" in rules)
        if "kernel-perceptron" in rules:
            snowpy.SnowClassifier("kernel-perceptron", calibrate=None).fit(
                ["a b", "c d"], ["x", "y"])
            print("numba" in sys.modules)
        else:
            print(True)
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    first, then = result.stdout.split("\n")[:2]
    assert first.split()[0] == "False"
    assert then == "True"


def test_entry_point_plugin_registers_and_trains(tmp_path):
    make_distribution(tmp_path, "snowpy_myrule", {"myrule": "snowpy_myrule_plugin"},
                      {"snowpy_myrule_plugin": GOOD_PLUGIN})
    result = run_python("""
        import snowpy
        from snowpy.plugins import list_rules
        provided = list_rules()["my-rule"]
        net = snowpy.Network("my-rule").fit([[1.0, 0.0], [0.0, 1.0]], ["a", "b"])
        print(provided.plugin, "|", provided.distribution, "|", net.predict([[1.0, 0.0]])[0])
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "myrule | snowpy_myrule 0.1 | a"


def test_plugin_that_fails_to_import_is_named_and_skipped(tmp_path):
    make_distribution(tmp_path, "snowpy_broken", {"broken": "snowpy_broken_plugin"},
                      {"snowpy_broken_plugin": "raise ImportError('needs libfoo')\n"})
    result = run_python("""
        import snowpy
        from snowpy.plugins import list_rules
        list_rules()  # (a built-in rule alone never loads the installed plugins)
        net = snowpy.Network("winnow").fit([[1.0, 0.0], [0.0, 1.0]], ["a", "b"])
        print(net.predict([[0.0, 1.0]])[0])
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "b"
    assert "snowpy plugin 'broken' (snowpy_broken 0.1, snowpy_broken_plugin)" in result.stderr
    assert "could not be loaded and was skipped: ImportError: needs libfoo" in result.stderr


def test_a_plugin_claiming_a_builtin_name_never_replaces_the_builtin(tmp_path):
    # issue 33.7: a plugin registering "winnow" disabled the built-in everywhere; a
    # built-in name is the built-in's, the plugin is named, and its rule is "clash:winnow"
    make_distribution(tmp_path, "snowpy_clash", {"clash": "snowpy_clash_plugin"},
                      {"snowpy_clash_plugin": CLASH_PLUGIN})
    result = run_python("""
        import snowpy
        from snowpy.plugins import get_rule, list_rules
        print(snowpy.Network("winnow").fit([[1.0]], ["a"]).engine_.spec.summary)
        print(list_rules()["winnow"].plugin)
        print(get_rule("clash:winnow").summary)
        print(snowpy.Network("clash:winnow").fit([[1.0]], ["a"]).engine_.spec.summary)
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "multiplicative" in lines[0] and lines[1] == "snowpy.rules.winnow"
    assert lines[2] == lines[3] == "an impostor"
    assert ("update rule 'winnow' is snowpy's built-in; plugin 'clash' (snowpy_clash 0.1) "
            "registers that name too: the built-in is used, and the plugin's is "
            "'clash:winnow'") in result.stderr


def test_two_plugins_claiming_one_name_are_both_named():
    mine = dataclasses.replace(get_rule("perceptron"), name="shared-rule", summary="mine")
    theirs = dataclasses.replace(get_rule("perceptron"), name="shared-rule", summary="theirs")
    first = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [mine]))
    second = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [theirs]))
    with pytest.warns(UserWarning, match="provided by both"):
        with temporary_plugin(first, "first"), temporary_plugin(second, "second"):
            with pytest.raises(PluginConflictError, match="plugin 'first' .* and plugin "
                                                          "'second'.*'first:shared-rule' or "
                                                          "'second:shared-rule'"):
                get_rule("shared-rule")
            assert get_rule("second:shared-rule").summary == "theirs"


def test_disable_and_trace_environment_variables():
    result = run_python("""
        from snowpy.plugins import list_rules
        print(sorted(list_rules()))
    """, SNOWPY_DISABLE_PLUGINS="snowpy.rules.winnow", SNOWPY_TRACE_HOOKS="1")
    assert result.returncode == 0, result.stderr
    names = result.stdout.strip()
    assert "'winnow'" not in names and "'perceptron'" in names
    assert "snowpy-trace: snowpy_update_rules <- snowpy.rules.perceptron: ['perceptron', " \
           "'thick-separator']" in result.stderr


def test_temporary_plugin_conflict_in_process():
    clash = dataclasses.replace(get_rule("winnow"), summary="an impostor")
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [clash]))
    with pytest.warns(UserWarning, match="registers that name too"):
        with temporary_plugin(plugin, "impostor"):
            assert get_rule("winnow").summary != "an impostor"
            assert list_rules()["winnow"].plugin == "snowpy.rules.winnow"
            assert get_rule("impostor:winnow").summary == "an impostor"
    assert get_rule("winnow").summary != "an impostor"


def test_plugin_returning_garbage_is_warned_and_skipped():
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: ["not a spec"]))
    with pytest.warns(UserWarning, match="returned 'not a spec' .* not a RuleSpec"):
        with temporary_plugin(plugin, "garbage"):
            assert "perceptron" in list_rules()


def test_a_plugin_that_raises_in_a_hook_is_named_and_the_others_are_kept():
    def broken():
        raise RuntimeError("no luck")

    kept = dataclasses.replace(get_rule("perceptron"), name="kept-rule")
    with pytest.warns(PluginWarning, match="snowpy plugin 'broken' .registered at run time. "
                                           "failed in snowpy_update_rules and was skipped: "
                                           "RuntimeError: no luck"):
        with temporary_plugin(types.SimpleNamespace(  # (pluggy calls the last one first)
                snowpy_update_rules=snowpy.hookimpl(lambda: [kept])), "kept"), \
                temporary_plugin(types.SimpleNamespace(
                    snowpy_update_rules=snowpy.hookimpl(broken)), "broken"):
            rules = list_rules()
    assert rules["kept-rule"].plugin == "kept" and "winnow" in rules


def test_a_hook_wrapper_and_a_call_monitor_see_the_registries_calls():
    """The registries call their hooks through the manager (pm.hook), as any pluggy host
    does: a hook wrapper registered as a plugin, and a monitor of the manager's calls,
    see them, each plugin's answer as records that name it."""
    seen, monitored = [], []

    @snowpy.hookimpl(wrapper=True)
    def snowpy_update_rules():
        answers = yield
        seen.extend((p.plugin, p.record.name) for answer in answers for p in answer)
        return answers

    undo = get_plugin_manager().add_hookcall_monitoring(
        lambda hook, impls, kwargs: monitored.append(hook), lambda *ignored: None)
    try:
        with temporary_plugin(types.SimpleNamespace(snowpy_update_rules=snowpy_update_rules),
                              "observer"):
            assert "winnow" in list_rules()
    finally:
        undo()
    assert ("snowpy.rules.winnow", "winnow") in seen
    assert ("arow", "arow") in seen
    assert "snowpy_update_rules" in monitored


def test_a_built_in_name_is_called_through_the_manager_before_the_entry_points_are_scanned():
    result = run_python("""
        from snowpy import plugins
        print(plugins.get_rule("winnow").name, plugins.get_plugin_manager.cache_info().currsize)
    """, SNOWPY_TRACE_HOOKS="1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["winnow", "0"]  # (no entry point scanned)
    assert re.search(r"snowpy-trace: +snowpy_update_rules \[hook\]", result.stderr)
    assert "snowpy_update_rules <- snowpy.rules.winnow: ['winnow']" in result.stderr
    assert "arow" not in result.stderr


def test_builtins_register_through_the_public_hook():
    source = Path(snowpy.__file__).parent / "rules"
    for module in ("perceptron", "winnow", "balanced_winnow", "aggressive"):
        text = (source / f"{module}.py").read_text()
        assert "@hookimpl\ndef snowpy_update_rules()" in text


def test_a_plugin_with_a_misspelled_hook_is_named_and_skipped(tmp_path):
    # issue 15.9: a misspelled hook name in one plugin broke every command
    make_distribution(tmp_path, "snowpy_typo", {"typo": "snowpy_typo_plugin"},
                      {"snowpy_typo_plugin": """
                          import snowpy

                          @snowpy.hookimpl
                          def snowpy_update_rule():  # the hook is snowpy_update_rules
                              return []
                      """})
    result = run_python("""
        import snowpy
        from snowpy.plugins import list_rules
        list_rules()  # (a built-in rule alone never loads the installed plugins)
        net = snowpy.Network("winnow").fit([[1.0, 0.0], [0.0, 1.0]], ["a", "b"])
        print(net.predict([[0.0, 1.0]])[0])
    """, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "b"
    assert "snowpy plugin 'typo' (snowpy_typo 0.1) was skipped" in result.stderr
    assert "snowpy_update_rule" in result.stderr and "snowpy_update_rules" in result.stderr


def _raising_update(w, S, t, y, activation, vals, m, sqnorm, params):
    if m >= 0:
        raise ValueError("kernel gave up")


def test_a_kernel_that_raises_fails_training_and_names_the_rule():
    # issue 15.6: numba printed "Exception ignored", training went on, exit status 0
    import numba
    import numpy as np

    from snowpy.exceptions import PluginError
    from snowpy.rules.spec import RuleKernel

    update = numba.njit(nogil=True)(_raising_update)
    spec = dataclasses.replace(get_rule("perceptron"), name="raising",
                               build=lambda params, context: RuleKernel(
                                   update=update, params=[0.1], initial_weights=(0.0,)))
    plugin = types.SimpleNamespace(snowpy_update_rules=snowpy.hookimpl(lambda: [spec]))
    with temporary_plugin(plugin, "raising-plugin"):
        with pytest.raises(PluginError, match="the update kernel of rule 'raising' .plugin "
                                              "'raising-plugin'.* raised ValueError: kernel "
                                              "gave up"):
            snowpy.Network("raising", theta=0.0).fit(np.eye(4), [0, 1, 0, 1])
        online = snowpy.Network("raising", theta=0.0)
        with pytest.raises(PluginError, match="raised ValueError: kernel gave up"):
            for row, label in zip(np.eye(4), [0, 1, 0, 1]):
                online.learn_one({int(np.argmax(row)): 1.0}, label)


OUT_OF_BOUNDS_PLUGIN = """
    import dataclasses

    import numba

    import snowpy
    from snowpy.rules.spec import RuleKernel
    from snowpy.rules.perceptron import PERCEPTRON

    @numba.njit(nogil=True)
    def update(w, S, t, y, activation, vals, m, sqnorm, params):
        for k in range(m + 1000):  # past the example's links
            w[k, 0] += 0.1 * y

    @snowpy.hookimpl
    def snowpy_update_rules():
        spec = PERCEPTRON  # (not get_rule: that would call this hook again)
        return [dataclasses.replace(spec, name="out-of-bounds", build=lambda p, c: RuleKernel(
            update=update, params=[0.1], initial_weights=(0.0,)))]
"""


def test_plugins_check_names_a_kernel_that_writes_outside_its_arrays(tmp_path):
    # issue 15.6: such a kernel segfaulted the process with no word naming the plugin;
    # `snowpy plugins --check RULE` runs it bounds-checked in a child process
    make_distribution(tmp_path, "snowpy_oob", {"oob": "snowpy_oob_plugin"},
                      {"snowpy_oob_plugin": OUT_OF_BOUNDS_PLUGIN})
    result = run_python("""
        import sys
        from snowpy.cli import main
        sys.argv = ["snowpy", "plugins", "--check", "out-of-bounds"]
        main()
    """, tmp_path)
    assert result.returncode == 1, result.stderr
    assert "rule 'out-of-bounds' (plugin 'oob', snowpy_oob 0.1)" in result.stderr
    assert "PluginWarning" not in result.stderr  # the plugin itself loads
    assert "fails the conformance suite" in result.stderr or "killed" in result.stderr
    assert "IndexError" in result.stderr or "outside its arrays" in result.stderr


def test_a_plugin_kernel_is_checked_before_it_first_trains_and_never_replaces_a_model(
        tmp_path):
    # issue 33.3: such a kernel crashed train (SIGSEGV, heap corruption), and in 2 runs of
    # 10 the existing model was replaced by one trained on corrupted memory
    make_distribution(tmp_path, "snowpy_oob", {"oob": "snowpy_oob_plugin"},
                      {"snowpy_oob_plugin": OUT_OF_BOUNDS_PLUGIN})
    model = tmp_path / "model.snowpy"
    assert run_python(f"""
        import snowpy
        snowpy.SnowClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"]).save({str(model)!r})
    """).returncode == 0
    before = model.read_bytes()
    train = f"""
        import sys
        from snowpy.cli import main
        sys.argv = ["snowpy", "train", {str(TRAIN)!r}, "-o", {str(model)!r}, "--rule",
                    "out-of-bounds", "--epochs", "1", "--calibrate", "none"]
        main()
    """
    result = run_python(train, tmp_path, SNOWPY_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 1, result.stderr
    assert "rule 'out-of-bounds' (plugin 'oob', snowpy_oob 0.1)" in result.stderr
    assert "does not train" in result.stderr and "Traceback" not in result.stderr
    assert model.read_bytes() == before
    assert not (tmp_path / "cache" / "checked-rules.json").exists()


def test_a_plugin_rule_that_passes_is_checked_once_per_version(tmp_path, monkeypatch):
    from snowpy.cli.rule_check import check_rule_once

    monkeypatch.setenv("SNOWPY_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SNOWPY_TRUST_PLUGINS", raising=False)
    assert check_rule_once("perceptron") is None  # snowpy's own
    said = check_rule_once("arow")
    assert said is not None and "passes the conformance suite" in said
    assert check_rule_once("arow") is None  # recorded
    assert any("arow|" in key for key in orjson.loads(
        (tmp_path / "checked-rules.json").read_bytes()))


STUCK_PLUGIN = """
    import dataclasses

    import numba

    import snowpy
    from snowpy.rules.spec import RuleKernel
    from snowpy.rules.perceptron import PERCEPTRON

    @numba.njit(nogil=True)
    def update(w, S, t, y, activation, vals, m, sqnorm, params):
        k = 0
        while k >= 0:  # never returns
            k = (k + 1) % 7

    @snowpy.hookimpl
    def snowpy_update_rules():
        spec = PERCEPTRON  # (not get_rule: that would call this hook again)
        return [dataclasses.replace(spec, name="stuck", build=lambda p, c: RuleKernel(
            update=update, params=[0.1], initial_weights=(0.0,)))]
"""


def test_ctrl_c_ends_a_training_whose_kernel_is_stuck(tmp_path):
    # issue 15.6: a kernel stuck in a loop ignored Ctrl-C (compiled code runs no signal
    # handler); training now runs beside the thread that takes the signal
    import signal
    import time

    make_distribution(tmp_path, "snowpy_stuck", {"stuck": "snowpy_stuck_plugin"},
                      {"snowpy_stuck_plugin": STUCK_PLUGIN})
    corpus = tmp_path / "c.tsv"
    corpus.write_text("a\thello there\nb\tgood bye\n" * 20)
    model = tmp_path / "m.snowpy"
    model.write_bytes(b"the previous model")
    environment = dict(os.environ, SNOWPY_STOP_GRACE="2", SNOWPY_TRUST_PLUGINS="1",  # (Ctrl-C
                       PYTHONPATH=os.pathsep.join(  # in training, not in the first check)
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    process = subprocess.Popen(
        [sys.executable, "-m", "snowpy", "train", str(corpus), "-o", str(model), "--rule",
         "stuck", "--calibrate", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=environment)
    for line in process.stderr:
        if line.startswith("read "):  # the corpus is read: training starts next
            break
    time.sleep(12)  # the kernel compiles (some seconds, afresh), then loops for ever
    process.send_signal(signal.SIGINT)
    try:
        _, rest = process.communicate(timeout=120)  # before the fix: never
    finally:
        process.kill()
    assert process.returncode == 130
    assert "the training did not stop in time" in rest
    assert model.read_bytes() == b"the previous model"


def test_training_with_a_built_in_rule_on_a_tsv_file_scans_no_installed_plugin(tmp_path):
    """`snowpy train corpus.tsv` with a built-in rule resolves the rule and the format
    from snowpy's own plugins: the entry points are not scanned, nor a third party's
    module imported (a built-in name always means the built-in record)."""
    from typer.testing import CliRunner

    from snowpy import plugins
    from snowpy.cli import app
    from snowpy.corpora import demo_path

    plugins.get_plugin_manager.cache_clear()
    plugins.reset()
    result = CliRunner().invoke(app, ["train", str(demo_path("train")), "-o",
                                      str(tmp_path / "m.snowpy"), "-q", "--rule", "winnow",
                                      "--epochs", "2"])
    assert result.exit_code == 0, result.output
    assert plugins.get_plugin_manager.cache_info().currsize == 0
    assert plugins.rule_provider("kernel-perceptron").plugin == "kernel-perceptron"
    assert plugins.get_plugin_manager.cache_info().currsize == 1  # (a plugin's: scanned)
