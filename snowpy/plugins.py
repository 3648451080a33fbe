"""The plugin manager and the registries built from its hooks.

The manager is built on first use and cached: ``import snowpy`` loads no
plugin. It registers snowpy's built-in plugins (the modules in
:data:`BUILTIN_PLUGINS`) and then every entry point of the group ``snowpy``,
each as a stand-in holding the plugin's hook implementations, which answer with
its records as :class:`Provided`; what raises, or is not a record, is named in a
:class:`PluginWarning` and left out, the other plugins' records kept. The
registries call the hooks as any pluggy host does (``pm.hook.snowpy_corpora()``),
and the rest of snowpy asks them for records by name (:func:`get_rule`).
:func:`temporary_plugin` registers a plugin the same way (not ``pm.register``).

Environment variables
---------------------
``SNOWPY_DISABLE_PLUGINS``
    Comma-separated plugin names (entry-point names, or built-in module names
    such as ``snowpy.rules.winnow``) that are not registered.
``SNOWPY_TRACE_HOOKS``
    When set to a non-empty value other than ``0``, every hook call and what
    each plugin returned is written to standard error.

Names
-----
A built-in name (``winnow``, ``words``...) always means snowpy's own record: a
plugin that registers one too is named in a warning, and its record is reached as
``plugin:name`` (``--rule impostor:winnow``). Two plugins claiming one other name
are a conflict; each is reached as ``plugin:name``, and looking the bare name up
raises :class:`~snowpy.exceptions.PluginConflictError` naming both. So a built-in
name resolves before the entry points are scanned, from the built-in plugins'
answers (a command using the built-in rules never pays for the scan).
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

    def __repr__(self) -> str:  # (short: SNOWPY_TRACE_HOOKS shows every hook's answers)
        return f"<{getattr(self.record, 'name', self.record)!r} from {self.plugin!r}>"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in {"", "0", "false", "no"}


def _record_type(hook: str) -> type:
    module, _, attr = _KINDS[hook][1].partition(":")
    return getattr(importlib.import_module(module), attr)


class _Provider:
    """What the manager registers for a plugin: its hook implementations, with their
    options and signatures (a wrapper as it is), answering with its records as Provided."""

    def __init__(self, pm: pluggy.PluginManager, plugin: object, name: str, dist: str) -> None:
        self.plugin, self.name, self.distribution = plugin, name, dist
        for attr in dir(plugin):
            opts = pm.parse_hookimpl_opts(plugin, attr)
            if opts is not None:
                function = getattr(plugin, attr)
                if not (opts.get("wrapper") or opts.get("hookwrapper")):
                    function = hookspecs.hookimpl(**opts)(
                        self._answering(function, opts.get("specname") or attr))
                setattr(self, attr, function)

    def __repr__(self) -> str:
        return repr(self.plugin)

    def __dir__(self) -> list[str]:  # (where pluggy looks for hooks: these alone, quickly)
        return list(vars(self))

    def _answering(self, function: Any, hook: str) -> Any:
        who = f"snowpy plugin {self.name!r} ({self.distribution})"

        @functools.wraps(function)  # (pluggy reads the plugin's signature through it)
        def answer(*args: Any, **kwargs: Any) -> list[Provided] | None:
            try:
                records = list(function(*args, **kwargs) or ())
            except Exception as exc:  # warned, and None: pluggy drops it, keeps the others
                warnings.warn(f"{who} failed in {hook} and was skipped: "
                              f"{type(exc).__name__}: {exc}", PluginWarning)
                return None
            if _env_flag("SNOWPY_TRACE_HOOKS"):
                print(f"snowpy-trace: {hook} <- {self.name}: "
                      f"{[getattr(r, 'name', r) for r in records]}", file=sys.stderr)
            expected = _record_type(hook)
            for record in records:
                if not isinstance(record, expected):
                    warnings.warn(f"{who} returned {record!r} from {hook}, not a "
                                  f"{expected.__name__}; it was skipped", PluginWarning)
            return [Provided(record, self.name, self.distribution) for record in records
                    if isinstance(record, expected)]
        return answer


@functools.cache
def _manager() -> pluggy.PluginManager:
    """The manager with the built-in plugins (:func:`get_plugin_manager` adds the rest)."""
    pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
    pm.add_hookspecs(hookspecs)
    for name in os.environ.get("SNOWPY_DISABLE_PLUGINS", "").split(","):
        if name.strip():
            pm.set_blocked(name.strip())
    for module in BUILTIN_PLUGINS:
        if not pm.is_blocked(module):
            pm.register(_Provider(pm, importlib.import_module(module), module, "snowpy (built-in)"),
                        module)
    if _env_flag("SNOWPY_TRACE_HOOKS"):  # pluggy's tracing: each hook call and its answers
        pm.trace.root.setwriter(lambda text: print("snowpy-trace:", text, end="", file=sys.stderr))
        pm.enable_tracing()
    return pm


@functools.cache
def get_plugin_manager() -> pluggy.PluginManager:
    """Build (once) and return the plugin manager: a plugin whose entry point fails to
    import is named in a :class:`PluginWarning` and skipped, the others still load."""
    pm = _manager()
    from importlib import metadata  # (14 ms: only when the installed plugins are scanned)

    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if pm.is_blocked(entry_point.name) or pm.has_plugin(entry_point.name):
            continue
        dist = entry_point.dist
        provider = f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
        try:
            pm.register(_Provider(pm, entry_point.load(), entry_point.name, provider),
                        entry_point.name)
        except Exception as exc:  # any failure of third-party code: warn and go on
            warnings.warn(f"snowpy plugin {entry_point.name!r} ({provider}, {entry_point.value}) "
                          f"could not be loaded and was skipped: {type(exc).__name__}: {exc}",
                          PluginWarning, stacklevel=2)
    while True:  # a plugin implementing a hook snowpy does not have (a misspelling) is
        try:      # named and skipped: the other plugins and every command still work
            pm.check_pending()
            break
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin)
            if name in BUILTIN_PLUGINS:
                raise PluginError(f"plugin {name!r}: {exc}") from None
            warnings.warn(f"snowpy plugin {name!r} ({getattr(exc.plugin, 'distribution', '?')})"
                          f" was skipped: {exc} (snowpy's hooks: "
                          f"{', '.join(sorted(_KINDS))})", PluginWarning, stacklevel=2)
            pm.unregister(exc.plugin)
    return pm


def _answers(pm: pluggy.PluginManager, hook: str) -> list[Provided]:
    """One call of ``hook``: the records in the order of their plugins' registration."""
    return [provided for answer in reversed(getattr(pm.hook, hook)()) for provided in answer]


@functools.cache
def _collect(hook: str) -> tuple[dict[str, Provided], dict[str, tuple[Provided, ...]],
                                 dict[str, tuple[Provided, ...]]]:
    """``(unique, conflicts, every)``: the record of each name (a built-in name: the
    built-in's), the names two plugins claim, and every provider of every name."""
    kind = _KINDS[hook][0]
    found: dict[str, list[Provided]] = {}
    for provided in _answers(get_plugin_manager(), hook):
        found.setdefault(provided.record.name, []).append(provided)
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
    """The built-in plugins' records of one hook, found without scanning entry points."""
    return {p.record.name: p for p in _answers(_manager(), hook) if p.plugin in BUILTIN_PLUGINS}


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
    if get_plugin_manager.cache_info().currsize == 0:  # not scanned yet: built-ins first
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
    """Forget the registries' cached records (after registering a plugin)."""
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
    name = name or pm.get_canonical_name(plugin)
    registered = pm.register(_Provider(pm, plugin, name, "registered at run time"), name)
    if registered is None:
        raise PluginError(f"plugin {name!r} is blocked (SNOWPY_DISABLE_PLUGINS)")
    reset()
    try:
        yield registered
    finally:
        pm.unregister(name=registered)
        reset()
