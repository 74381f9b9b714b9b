"""`make bench` (faces part): what a package face costs, imported and when its first name is read.

Each round is a fresh process with a bytecode cache (PYTHONPYCACHEPREFIX, filled by a warm-up)
and `typing` already loaded: it imports every lazy face of the runtime and the reference hub
(perf_counter around the imports), then reads `__all__` of each, the first read that makes a face
take its list from its `TYPE_CHECKING` block (_lazy.py). It prints the minimum and the median;
nothing here asserts a target. `--before DIR` measures another source tree too (DIR holds its
`custodian_runtime/`, first on PYTHONPATH), interleaved in the same rounds.

    python bench/faces.py
    mkdir -p .cache/before && git archive REF runtime | tar -x -C .cache/before && \\
        python bench/faces.py --before .cache/before/runtime

Target: every face's first read together at most a few hundred microseconds; a command reads
the names of a few faces only (`custodian --help` one, a run nine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
ROUND = """
import importlib, sys, time, typing, collections.abc
faces = sys.argv[1].split()
start = time.perf_counter()
for face in faces:
    importlib.import_module(face)
imported = time.perf_counter()
for face in faces:
    sys.modules[face].__all__
print(round((imported - start) * 1e6), round((time.perf_counter() - imported) * 1e6))
"""


def faces(runtime: Path) -> list[str]:
    """Every package of `runtime` whose face imports its names when first read."""
    return sorted(
        ".".join(p.parent.relative_to(runtime).parts)
        for p in runtime.rglob("__init__.py")
        if "lazy_attributes(" in p.read_text(encoding="utf-8")
    )


def one_round(runtime: Path, cache: str, names: list[str]) -> tuple[int, int]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(runtime)}
    env["PYTHONPYCACHEPREFIX"] = cache
    argv = [sys.executable, "-c", ROUND, " ".join(names)]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    imported, first_read = out.split()
    return int(imported), int(first_read)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--before", type=Path, help="another tree's runtime/ to compare")
    args = parser.parse_args()
    trees = {"this tree": RUNTIME, **({"before": args.before.resolve()} if args.before else {})}
    figures: dict[str, list[tuple[int, int]]] = {label: [] for label in trees}
    with tempfile.TemporaryDirectory() as cache:
        for label, runtime in trees.items():
            one_round(runtime, f"{cache}/{label}", faces(runtime))  # fills the bytecode cache
        for _ in range(args.rounds):
            for label, runtime in trees.items():
                figures[label].append(one_round(runtime, f"{cache}/{label}", faces(runtime)))
    for label, rounds in figures.items():
        imported = [r[0] for r in rounds]
        read = [r[1] for r in rounds]
        print(
            f"{label}: {len(faces(trees[label]))} faces imported: min {min(imported)} us, median "
            f"{statistics.median(imported):.0f} us; first __all__ of each: min {min(read)} us, "
            f"median {statistics.median(read):.0f} us ({args.rounds} rounds)"
        )


if __name__ == "__main__":
    main()
