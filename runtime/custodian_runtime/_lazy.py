"""A package's face names each public name once: its `if TYPE_CHECKING:` imports.

The type checker reads those imports for the real types. At run time they never run: the face
ends with `__getattr__, __dir__ = lazy_attributes(globals())` (PEP 562), and the first name read
from the package reads the face's own source, takes its `TYPE_CHECKING` block as the list of what
the package offers, and imports that name from its module. `__all__` is that list, derived on
first read too, so importing a package costs one function call until a name is read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

BLOCK = "\nif TYPE_CHECKING:\n"


def offered(source: str, package: str) -> dict[str, tuple[str, str]]:
    """Each public name the face's `TYPE_CHECKING` block imports -> (its module, its name there).

    `from package import sub` offers the submodule `sub` (module `package.sub`, name "").
    """
    _, found, rest = source.partition(BLOCK)
    if not found:
        raise ImportError(f"{package}: its face has no `if TYPE_CHECKING:` block to offer names")
    lines = []
    for line in rest.splitlines():
        if line[:1] not in ("", " "):
            break
        lines.append(line.partition("#")[0])
    names: dict[str, tuple[str, str]] = {}
    for statement in " ".join(lines).split(" from ")[1:]:
        module, _, imported = statement.partition(" import ")
        module = module.strip()
        for part in imported.replace("(", " ").replace(")", " ").split(","):
            words = part.split()  # `name` or `name as alias`
            if words:
                name = words[0]
                where = (f"{module}.{name}", "") if module == package else (module, name)
                names[words[-1]] = where
    return names


def lazy_attributes(
    namespace: dict[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the face whose globals are `namespace`."""
    package = namespace["__name__"]
    table: dict[str, tuple[str, str]] = {}

    def where() -> dict[str, tuple[str, str]]:
        # Two threads reading first both parse; `update` of a whole dict is one step (the GIL).
        if not table:
            with open(namespace["__file__"], "rb") as face:  # bytes: a third cheaper than text
                table.update(offered(face.read().decode("utf-8"), package))
        return table

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(where())
        elif name in where():
            module, inside = table[name]
            value = importlib.import_module(module)
            value = getattr(value, inside) if inside else value
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value  # the next read is a plain global lookup
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where()))

    return __getattr__, __dir__
