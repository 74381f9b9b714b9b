"""`make bench` (fleet part): does rendering k8s/fleet grow with the number of domains?

It copies k8s/fleet into a temporary directory with 10, 100 and 1,000 domains in domains.txt,
renders each with `kubectl kustomize` (alternating, --rounds times) and prints the object count
and the median render time per size. Nothing here asserts a target; tests/k8s/test_k8s_fleet.py
checks that the objects are the same.

    python bench/k8s_fleet.py             # 5 rounds

Target: the same object count for every size, and 1,000 domains within 1.5x the time of 10.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

FLEET = Path(__file__).resolve().parent.parent / "k8s" / "fleet"
SIZES = (10, 100, 1000)


def prepare(root: Path, size: int) -> Path:
    """A copy of k8s/fleet listing `size` domains."""
    copy = root / f"fleet-{size}"
    shutil.copytree(FLEET, copy)
    names = "".join(f"d{n:04d}\n" for n in range(size))
    (copy / "domains.txt").write_text(names, encoding="utf-8")
    return copy


def render(kubectl: str, path: Path) -> tuple[float, int]:
    """Seconds to render `path`, and how many objects it renders."""
    began = time.perf_counter()
    out = subprocess.run(
        [kubectl, "kustomize", str(path)], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return time.perf_counter() - began, out.count("\nkind: ") + out.startswith("kind: ")


def main() -> int:
    """Print the object count and median render time of each size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("kubectl not found: the fleet render is not measured")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = {size: prepare(Path(tmp), size) for size in SIZES}
        times: dict[int, list[float]] = {size: [] for size in SIZES}
        counts: dict[int, int] = {}
        for round_ in range(args.rounds):
            for size in SIZES if round_ % 2 == 0 else reversed(SIZES):
                seconds, counts[size] = render(kubectl, paths[size])
                times[size].append(seconds)
    base = statistics.median(times[SIZES[0]])
    for size in SIZES:
        median = statistics.median(times[size])
        print(
            f"k8s/fleet with {size:>5} domains: {counts[size]} objects, "
            f"render {median * 1000:.0f} ms (x{median / base:.2f} of {SIZES[0]})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
