"""The site's build hooks (mkdocs.yml names this file; it is not a page of the site).

- The command-line reference is written from the typer app itself:
  ``docs/reference/cli.md`` holds the marker ``<!-- snowpy commands -->``, replaced at
  build time by every command's usage, help and options, read from ``snowpy.cli.app``,
  so that the page cannot drift from the code.
- The API reference's docstrings name objects as Sphinx does (``:class:`Network```);
  the roles are dropped and the names shown as code.
- :class:`Prose`, a griffe extension: a paragraph of prose that follows a docstring's
  Attributes section is read as prose (numpydoc's parser would read it as one more
  attribute), under a Notes heading.
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any

import griffe

LOG = logging.getLogger("mkdocs.plugins.snowpy")
MARKER = "<!-- snowpy commands -->"
PAGE = "reference/cli.md"
ROLES = re.compile(r":(?:class|func|meth|mod|attr|data|exc|obj):(<code>)~?")


def _text(value: str) -> str:
    """Plain help text as Markdown: HTML and emphasis characters escaped outside
    code spans, paragraphs kept."""
    parts = value.replace("\b\n", "").replace("\b", "").replace("\\[", "[").split("`")
    for index in range(0, len(parts), 2):
        escaped = html.escape(parts[index], quote=False)
        parts[index] = re.sub(r"([*_\[\]|])", r"\\\1", escaped)
    return "`".join(parts)


def _cell(value: str) -> str:
    return _text(" ".join(value.split()))


def _default(param: Any) -> str:
    default = param.default
    if default is None or default == () or getattr(param, "is_flag", False) and default is False:
        return ""
    if callable(default):
        return ""
    if isinstance(default, (list, tuple)):
        default = " ".join(map(str, default))
    return f"`{default}`" if str(default) != "" else ""


def _usage(path: str, command: Any) -> str:
    pieces = [path]
    if any(not getattr(p, "hidden", False) and p.param_type_name == "option"
           for p in command.params):
        pieces.append("[OPTIONS]")
    for param in command.params:
        if param.param_type_name != "argument":
            continue
        name = (param.metavar or param.name or "").upper()
        if param.nargs == -1:
            name += "..."
        pieces.append(name if param.required else f"[{name}]")
    if hasattr(command, "commands"):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def _command(path: str, command: Any, level: int) -> list[str]:
    lines = [f"{'#' * level} `{path}`", "", "```text", _usage(path, command), "```", ""]
    if command.help:
        lines += [_text(command.help.strip()), ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params
               if p.param_type_name == "option" and not getattr(p, "hidden", False)]
    if arguments:
        lines += ["| Argument | Description |", "|---|---|"]
        for param in arguments:
            name = (param.metavar or param.name or "").upper()
            lines.append(f"| `{name}` | {_cell(getattr(param, 'help', None) or '')} |")
        lines.append("")
    if options:
        lines += ["| Option | Default | Description |", "|---|---|---|"]
        for param in options:
            names = ", ".join(f"`{name}`" for name in [*param.opts, *param.secondary_opts])
            lines.append(f"| {names} | {_default(param)} | {_cell(param.help or '')} |")
        lines.append("")
    for name, sub in getattr(command, "commands", {}).items():
        if not getattr(sub, "hidden", False):
            lines += _command(f"{path} {name}", sub, min(level + 1, 4))
    return lines


def reference() -> str:
    """Every command of ``snowpy``, as Markdown."""
    import typer

    from snowpy.cli import app

    group = typer.main.get_command(app)
    lines = _command("snowpy", group, 2)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri == PAGE:
        assert MARKER in markdown, f"{PAGE} has lost its marker {MARKER}"
        markdown = markdown.replace(MARKER, reference())
    return markdown


#: a page named in a docstring as a file of the source tree: ``docs/rules.md``
PAGE_NAMED = re.compile(r"<code>docs/([\w/-]+)\.md</code>")


def on_page_content(content: str, page: Any, files: Any, **_: Any) -> str:
    """The API reference's docstrings name objects as Sphinx does
    (``:class:`snowpy.Network```): shown as the code they name. The pages they name
    (``docs/rules.md``) become links to those pages of the site."""
    up = "../" * page.url.count("/")

    def link(named: re.Match) -> str:
        if files.get_file_from_path(f"{named[1]}.md") is None:  # (a warning fails --strict)
            LOG.warning("%s names docs/%s.md, which is no page", page.file.src_uri, named[1])
            return named[0]
        return f'<a href="{up}{named[1]}/"><code>docs/{named[1]}.md</code></a>'

    content = PAGE_NAMED.sub(link, content)
    return ROLES.sub(r"\1", content)


#: a line that starts prose (a capitalised word, then another): not a name and its type
_PROSE = re.compile(r"^[A-Z][a-z]* [a-z]")


class Prose(griffe.Extension):
    """Docstrings read as numpydoc means them: prose after a Parameters or Attributes
    section goes under Notes, a doctest outside an Examples section is code, and reST's
    ``::`` before a literal block is not shown."""

    def on_instance(self, *, obj: Any, **_: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = "\n".join(_numpydoc(obj.docstring.value.split("\n")))
        if getattr(obj, "is_function", False):
            _defaults_as_values(obj)


#: a default read from a module's table of defaults: ``_DEFAULTS["rule"]``
_TABLED = re.compile(r"^_?[A-Z][A-Z_]*\[")


def _defaults_as_values(function: Any) -> None:
    """A signature's default taken from a table (``rule=_DEFAULTS["rule"]``) is shown
    as its value (``'passive-aggressive'``), which is what a reader needs."""
    import importlib

    for parameter in function.parameters:
        default = parameter.default
        if default is None or not _TABLED.match(str(default)):
            continue
        try:
            module = importlib.import_module(function.module.path)
            parameter.default = repr(eval(str(default), vars(module)))  # noqa: S307
        except Exception:  # noqa: BLE001 (shown as written, then)
            continue


def _numpydoc(lines: list[str]) -> list[str]:
    lines = _joined_names(lines)
    out: list[str] = []
    section = None
    doctest = False
    for index, line in enumerate(lines):
        if doctest and not line.strip():
            out += ["```", ""]
            doctest = False
            continue
        if index + 1 < len(lines) and lines[index + 1] and set(lines[index + 1]) == {"-"}:
            section = line.strip()
        elif (section in ("Parameters", "Attributes") and index and not lines[index - 1]
              and _PROSE.match(line)):
            out += ["Notes", "-----"]
            section = "Notes"
        elif line.lstrip().startswith(">>>") and not doctest and section != "Examples":
            out += ["", "```pycon"]
            doctest = True
        if line.rstrip().endswith("::"):  # reST's literal block: the indented lines after
            line = line.rstrip()[:-2].rstrip() + ("" if line.rstrip().endswith(" ::") else ":")
        out.append(line)
    if doctest:
        out.append("```")
    return out


def _joined_names(lines: list[str]) -> list[str]:
    """Names of parameters that share a description (``a, b,`` then ``c :``, over one
    line or several) as one entry each, with that description: numpydoc's parser gives
    a group the first name's type and default."""
    joined: list[str] = []
    for line in lines:
        if joined and re.fullmatch(r"\w+(, \w+)*,", joined[-1]) and line.strip() \
                and line == line.lstrip():
            joined[-1] = f"{joined[-1]} {line.strip()}"
        else:
            joined.append(line)
    out: list[str] = []
    index = 0
    while index < len(joined):
        group = re.fullmatch(r"(\w+(?:, \w+)+) :\s*(.*)", joined[index])
        if not group:
            out.append(joined[index])
            index += 1
            continue
        end = index + 1
        while end < len(joined) and joined[end].startswith((" ", "\t")):
            end += 1
        for name in group[1].split(", "):
            out += [f"{name} : {group[2]}".rstrip(), *joined[index + 1:end]]
        index = end
    return out
