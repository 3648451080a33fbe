"""A third-party rule's kernel is checked before it first trains a model.

A plugin kernel that writes outside its arrays can corrupt the process's memory and
still reach the save: a model trained on corrupted memory then replaces the previous
one (as it did in 2 runs of 10). So the command line runs the conformance suite on a
rule that is not snowpy's own, in a child process with its buffers guarded (``snowpy plugins --check``),
the first time that version of its distribution trains, and records the pass in
``$SNOWPY_CACHE_DIR`` (default ``~/.cache/snowpy``). A failure or a crash names the
plugin in one line, before the corpus is read. ``SNOWPY_TRUST_PLUGINS=1`` skips it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson

from snowpy._atomic import write_bytes
from snowpy.exceptions import ConfigurationError

__all__ = ["CHECK_SECONDS", "check_rule_once", "verify_rule"]

#: The conformance suite takes under a second on a working kernel.
CHECK_SECONDS = 120


def _record_path() -> Path:
    folder = os.environ.get("SNOWPY_CACHE_DIR") or Path.home() / ".cache" / "snowpy"
    return Path(folder) / "checked-rules.json"


def verify_rule(rule: str) -> tuple[bool, str]:
    """Run the conformance suite on ``rule`` in a child process with its buffers
    guarded: ``(passed, what to say)``."""
    from snowpy.plugins import rule_provider

    provided = rule_provider(rule)  # an unknown rule is named before anything runs
    who = f"rule {rule!r} (plugin {provided.plugin!r}, {provided.distribution})"
    env = dict(os.environ, SNOWPY_CHECK_KERNELS="1", NUMBA_BOUNDSCHECK="1")
    code = ("import sys; from snowpy.testing import check_rule; "
            f"check_rule({rule!r}); print('conforms')")
    try:
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, timeout=CHECK_SECONDS)
    except subprocess.TimeoutExpired:
        return False, (f"{who} did not finish the conformance suite in {CHECK_SECONDS} s "
                       "(a kernel that never returns?)")
    if result.returncode == 0 and "conforms" in result.stdout:
        return True, f"{who} passes the conformance suite with its buffers guarded"
    if result.returncode < 0:
        name = signal.Signals(-result.returncode).name
        return False, (f"{who} killed the checking process ({name}): its kernel reads or "
                       "writes outside its arrays")
    last = [line for line in result.stderr.strip().splitlines() if line.strip()]
    return False, f"{who} fails the conformance suite: {last[-1] if last else 'no message'}"


def check_rule_once(rule: str) -> str | None:
    """Before ``rule`` trains: nothing for snowpy's own rules, a recorded pass, or
    ``SNOWPY_TRUST_PLUGINS=1``; else the check, run once per version of the plugin's
    distribution. Returns what to say when it ran; raises when the rule fails it."""
    from snowpy.exceptions import SnowpyError
    from snowpy.plugins import rule_provider

    try:  # (a built-in rule is known without scanning the installed plugins)
        provided = rule_provider(rule)
    except SnowpyError:
        return None  # (an unknown rule is named where it is used)
    if provided.plugin.startswith("snowpy.") \
            or os.environ.get("SNOWPY_TRUST_PLUGINS") == "1":
        return None
    key = f"{rule}|{provided.plugin}|{provided.distribution}"
    record = _record_path()
    try:
        passed = set(orjson.loads(record.read_bytes()))
    except (OSError, orjson.JSONDecodeError, TypeError):
        passed = set()
    if key in passed:
        return None
    ok, message = verify_rule(rule)
    if not ok:
        raise ConfigurationError(f"{message}; it would train on corrupted memory, so it "
                                 "does not train (SNOWPY_TRUST_PLUGINS=1 runs it anyway)")
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(record, orjson.dumps(sorted(passed | {key})))
    except OSError:
        pass  # (checked again next time)
    return f"checked {message}"
