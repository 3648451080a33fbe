"""The plugin manager and the registries built from its hooks.

The manager is built on first use and cached: ``import snowpy`` loads no
plugin. It registers snowpy's built-in plugins (the modules in
:data:`BUILTIN_PLUGINS`) and then every entry point of the group ``snowpy``,
all through the same hooks.

Environment variables
---------------------
``SNOWPY_DISABLE_PLUGINS``
    Comma-separated plugin names (entry-point names, or built-in module names
    such as ``snowpy.rules.winnow``) that are not registered.
``SNOWPY_TRACE_HOOKS``
    When set to a non-empty value other than ``0``, every hook call and what
    each plugin returned is written to standard error.

The rest of snowpy asks this module for records by name
(:func:`get_rule`) and never calls ``pm.hook`` itself.

Names
-----
A built-in name (``winnow``, ``words``...) always means snowpy's own record: a
plugin that registers one too is named in a warning, and its record is reached as
``plugin:name`` (``--rule impostor:winnow``). Two plugins claiming one other name
are a conflict; each is reached as ``plugin:name``, and looking the bare name up
raises :class:`~snowpy.exceptions.PluginConflictError` naming both. So a built-in
name resolves without loading the installed plugins at all (a command using the
built-in rules never pays for the entry points' scan).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pluggy

from snowpy import hookspecs
from snowpy.exceptions import PluginConflictError, PluginError, UnknownNameError

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginWarning",
    "Provided",
    "collect",
    "get_corpus",
    "get_format",
    "get_extractor",
    "get_plugin_manager",
    "get_rule",
    "list_corpora",
    "list_formats",
    "list_extractors",
    "list_rules",
    "reset",
    "rule_provider",
    "temporary_plugin",
]

ENTRY_POINT_GROUP = "snowpy"

#: Built-in plugins, registered exactly like third-party ones.
BUILTIN_PLUGINS = (
    "snowpy.rules.perceptron",
    "snowpy.rules.winnow",
    "snowpy.rules.balanced_winnow",
    "snowpy.rules.aggressive",
    "snowpy.rules.naive_bayes",
    "snowpy.rules.normalised_winnow",
    "snowpy.text.extractors.words",
    "snowpy.text.extractors.skipgrams",
    "snowpy.text.extractors.chars",
    "snowpy.text.extractors.affixes",
    "snowpy.text.extractors.conjunctions",
    "snowpy.corpora.builtin",
    "snowpy.corpora.builtin_formats",
)

#: hook name -> (record kind used in messages, record type path)
_KINDS = {
    "snowpy_update_rules": ("update rule", "snowpy.rules.spec:RuleSpec"),
    "snowpy_feature_extractors": ("feature extractor", "snowpy.text.extractors.spec:ExtractorSpec"),
    "snowpy_corpora": ("corpus", "snowpy.corpora.spec:CorpusSpec"),
    "snowpy_corpus_formats": ("corpus format", "snowpy.corpora.spec:FormatSpec"),
}


class PluginWarning(UserWarning):
    """A plugin could not be loaded or returned something unusable; it was skipped."""


@dataclass(frozen=True)
class Provided:
    """A record together with the plugin (and distribution) that provided it."""

    record: Any
    plugin: str
    distribution: str


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in {"", "0", "false", "no"}


def _disabled() -> set[str]:
    return {n.strip() for n in os.environ.get("SNOWPY_DISABLE_PLUGINS", "").split(",") if n.strip()}


def _trace(message: str) -> None:
    if _env_flag("SNOWPY_TRACE_HOOKS"):
        print(f"snowpy-trace: {message}", file=sys.stderr)


_distributions: dict[str, str] = {}


def _hook_names() -> list[str]:
    return [name for name in dir(hookspecs) if name.startswith("snowpy_")]


@functools.cache
def get_plugin_manager() -> pluggy.PluginManager:
    """Build (once) and return the plugin manager.

    A plugin whose entry point fails to import is named in a
    :class:`PluginWarning` and skipped; the others still load.
    """
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    for name in _disabled():
        pm.set_blocked(name)
    for module_name in BUILTIN_PLUGINS:
        if pm.is_blocked(module_name):
            continue
        pm.register(importlib.import_module(module_name), name=module_name)
        _distributions[module_name] = "snowpy (built-in)"
    from importlib import metadata  # (14 ms: only when the installed plugins are scanned)

    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if pm.is_blocked(entry_point.name) or pm.has_plugin(entry_point.name):
            continue
        dist = entry_point.dist
        provider = f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
        try:
            plugin = entry_point.load()
            pm.register(plugin, name=entry_point.name)
        except Exception as exc:  # any failure of third-party code: warn and go on
            warnings.warn(
                f"snowpy plugin {entry_point.name!r} ({provider}, {entry_point.value}) "
                f"could not be loaded and was skipped: {type(exc).__name__}: {exc}",
                PluginWarning,
                stacklevel=2,
            )
            continue
        _distributions[entry_point.name] = provider
    while True:  # a plugin implementing a hook snowpy does not have (a misspelling) is
        try:      # named and skipped: the other plugins and every command still work
            pm.check_pending()
            break
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin)
            if name in BUILTIN_PLUGINS:
                raise PluginError(f"plugin {name!r}: {exc}") from None
            warnings.warn(f"snowpy plugin {name!r} ({_distributions.get(name, '?')}) was "
                          f"skipped: {exc} (snowpy's hooks: "
                          f"{', '.join(sorted(_hook_names()))})", PluginWarning, stacklevel=2)
            pm.unregister(exc.plugin)
            _distributions.pop(name, None)
    if _env_flag("SNOWPY_TRACE_HOOKS"):
        pm.trace.root.setwriter(
            lambda text: print(f"snowpy-trace: {text}", end="", file=sys.stderr)
        )
        pm.enable_tracing()
    return pm


def _record_type(hook: str) -> type:
    module, _, attr = _KINDS[hook][1].partition(":")
    return getattr(importlib.import_module(module), attr)


@functools.cache
def _collect(hook: str) -> tuple[dict[str, Provided], dict[str, tuple[Provided, ...]],
                                 dict[str, tuple[Provided, ...]]]:
    """``(unique, conflicts, every)``: the record of each name (a built-in name: the
    built-in's), the names two plugins claim, and every provider of every name."""
    pm = get_plugin_manager()
    kind = _KINDS[hook][0]
    record_type = _record_type(hook)
    found: dict[str, list[Provided]] = {}
    for impl in getattr(pm.hook, hook).get_hookimpls():
        plugin = impl.plugin_name
        provider = _distributions.get(plugin, "registered at run time")
        try:
            records = list(impl.function() or ())
        except Exception as exc:
            warnings.warn(
                f"snowpy plugin {plugin!r} ({provider}) failed in {hook} and was skipped: "
                f"{type(exc).__name__}: {exc}",
                PluginWarning,
                stacklevel=3,
            )
            continue
        _trace(f"{hook} <- {plugin}: {[getattr(r, 'name', r) for r in records]}")
        for record in records:
            if not isinstance(record, record_type):
                warnings.warn(
                    f"snowpy plugin {plugin!r} ({provider}) returned {record!r} from {hook}, "
                    f"not a {record_type.__name__}; it was skipped",
                    PluginWarning,
                    stacklevel=3,
                )
                continue
            found.setdefault(getattr(record, "name"), []).append(  # noqa: B009 - typed object
                Provided(record, plugin, provider))
    unique: dict[str, Provided] = {}
    conflicts: dict[str, tuple[Provided, ...]] = {}
    for name, items in found.items():
        builtin = [p for p in items if p.plugin in BUILTIN_PLUGINS]
        if builtin and len(items) > 1:  # a built-in name is the built-in's
            unique[name] = builtin[0]
            others = ", ".join(f"plugin {p.plugin!r} ({p.distribution})"
                               for p in items if p.plugin not in BUILTIN_PLUGINS)
            warnings.warn(f"{kind} {name!r} is snowpy's built-in; {others} registers that "
                          f"name too: the built-in is used, and the plugin's is "
                          f"'{items[-1].plugin}:{name}'", PluginWarning, stacklevel=3)
        elif len(items) == 1:
            unique[name] = items[0]
        else:
            conflicts[name] = tuple(items)
            warnings.warn(_conflict_message(kind, name, conflicts[name]), PluginWarning,
                          stacklevel=3)
    return unique, conflicts, {name: tuple(items) for name, items in found.items()}


def _conflict_message(kind: str, name: str, items: tuple[Provided, ...]) -> str:
    who = " and ".join(f"plugin {p.plugin!r} ({p.distribution})" for p in items)
    which = " or ".join(f"'{p.plugin}:{name}'" for p in items)
    return (f"{kind} {name!r} is provided by both {who}; choose one as {which}, or "
            "disable one with SNOWPY_DISABLE_PLUGINS")


def collect(hook: str) -> dict[str, Provided]:
    """All records of one hook by name, each with its provider (cached).

    Names claimed by two plugins are left out (and warned about); looking
    one of them up raises :class:`PluginConflictError`.
    """
    return dict(_collect(hook)[0])


@functools.cache
def _builtin(hook: str) -> dict[str, Provided]:
    """The built-in plugins' records of one hook (not those disabled), found without the
    manager: importing the built-in modules, never scanning entry points."""
    disabled = _disabled()
    found: dict[str, Provided] = {}
    for module_name in BUILTIN_PLUGINS:
        if module_name in disabled:
            continue
        module = importlib.import_module(module_name)
        function = getattr(module, hook, None)
        if function is None:
            continue
        for record in function() or ():
            found[record.name] = Provided(record, module_name, "snowpy (built-in)")
    return found


def _get(hook: str, name: Any) -> Provided:
    if isinstance(name, _record_type(hook)):  # a record given as an object, not by name
        return Provided(name, "given", "given as an object")
    if not isinstance(name, str):
        raise UnknownNameError(_KINDS[hook][0], repr(name), list(_collect(hook)[0]))
    plugin, colon, bare = name.rpartition(":")
    if colon:  # "plugin:name": a plugin's record of that name, built-in name or not
        for provided in _collect(hook)[2].get(bare, ()):
            if provided.plugin == plugin:
                return provided
        raise UnknownNameError(_KINDS[hook][0], name, [
            f"{p.plugin}:{n}" for n, items in _collect(hook)[2].items() for p in items])
    if get_plugin_manager.cache_info().currsize == 0:  # no manager yet: built-ins first
        builtin = _builtin(hook).get(name)
        if builtin is not None:
            return builtin
    unique, conflicts, _ = _collect(hook)
    if name in unique:
        return unique[name]
    kind = _KINDS[hook][0]
    if name in conflicts:
        raise PluginConflictError(_conflict_message(kind, name, conflicts[name]))
    raise UnknownNameError(kind, name, list(unique) + list(conflicts))


def get_rule(name: Any) -> Any:
    """The :class:`~snowpy.rules.RuleSpec` registered under ``name`` (a rule given as a
    ``RuleSpec`` object: itself, registered or not).

    Raises
    ------
    UnknownNameError
        No plugin provides it; the message lists the known rules.
    PluginConflictError
        Two plugins provide it; the message names both.

    Examples
    --------
    >>> get_rule("winnow").name
    'winnow'
    >>> get_rule("winow")
    Traceback (most recent call last):
    ...
    snowpy.exceptions.UnknownNameError: unknown update rule 'winow'; choose one of: ...
    """
    return _get("snowpy_update_rules", name).record


def rule_provider(name: str) -> Provided:
    """The rule registered under ``name`` with the plugin that provides it (a built-in
    name found without scanning the installed plugins); the errors of :func:`get_rule`.

    >>> rule_provider("winnow").plugin
    'snowpy.rules.winnow'
    """
    return _get("snowpy_update_rules", name)


def list_rules() -> dict[str, Provided]:
    """Every installed update rule by name, with the plugin that provides it."""
    return collect("snowpy_update_rules")


def get_extractor(name: str) -> Any:
    """The :class:`~snowpy.text.extractors.ExtractorSpec` registered under ``name``.

    Raises the same errors as :func:`get_rule`.
    """
    return _get("snowpy_feature_extractors", name).record


def list_extractors() -> dict[str, Provided]:
    """Every installed feature extractor by name, with its provider."""
    return collect("snowpy_feature_extractors")


def get_corpus(name: str) -> Any:
    """The :class:`~snowpy.corpora.CorpusSpec` registered under ``name``."""
    return _get("snowpy_corpora", name).record


def list_corpora() -> dict[str, Provided]:
    """Every registered corpus by name, with its provider."""
    return collect("snowpy_corpora")


def get_format(name: str) -> Any:
    """The :class:`~snowpy.corpora.spec.FormatSpec` registered under ``name``."""
    return _get("snowpy_corpus_formats", name).record


def list_formats(*, installed: bool = True) -> dict[str, Provided]:
    """Every corpus file format by name, with its provider (``installed=False``: the
    built-in ones alone, found without scanning the installed plugins)."""
    return collect("snowpy_corpus_formats") if installed else \
        dict(_builtin("snowpy_corpus_formats"))


def reset() -> None:
    """Forget the cached manager and registries (after registering a plugin)."""
    _collect.cache_clear()
    _builtin.cache_clear()


@contextlib.contextmanager
def temporary_plugin(plugin: object, name: str | None = None) -> Iterator[str]:
    """Register ``plugin`` for the duration of a ``with`` block.

    Meant for tests and notebooks: the registries see the plugin inside the
    block and forget it afterwards.

    Examples
    --------
    >>> import dataclasses, types
    >>> from snowpy import hookimpl
    >>> copy = dataclasses.replace(get_rule("perceptron"), name="my-perceptron")
    >>> plugin = types.SimpleNamespace(snowpy_update_rules=hookimpl(lambda: [copy]))
    >>> with temporary_plugin(plugin, "my-plugin"):
    ...     "my-perceptron" in list_rules()
    True
    >>> "my-perceptron" in list_rules()
    False
    """
    pm = get_plugin_manager()
    registered = pm.register(plugin, name=name)
    if registered is None:
        raise PluginError(f"plugin {name!r} is blocked (SNOWPY_DISABLE_PLUGINS)")
    reset()
    try:
        yield registered
    finally:
        pm.unregister(name=registered)
        reset()
