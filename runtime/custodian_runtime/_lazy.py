"""Package attributes imported on first access (PEP 562), so importing a package costs nothing."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_attributes(
    package: str,
    namespace: dict[str, Any],
    names: Mapping[str, str] | None = None,
    submodules: Iterable[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name comes from its module when first read.

    `names` maps a public name to the module (relative to `package`) that defines it;
    `submodules` are public names that are the package's modules themselves.
    """
    where = dict(names or {})
    modules = frozenset(submodules)

    def __getattr__(name: str) -> Any:
        if name in modules:
            value = importlib.import_module(f"{package}.{name}")
        elif name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value  # the next read is a plain global lookup
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where) | modules)

    return __getattr__, __dir__
