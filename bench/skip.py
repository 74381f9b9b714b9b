"""`make bench` (skip part): does a skipped run cost the same on a big domain as on a small one?

Two reference hubs on loopback, seeded with generated domains of 100 and 30,000 tasks. Each gets
one forced `custodian run` (offline model) and one more run, so that its journal holds a completed
run; then skipped runs, each a whole process, in pairs (100, 30,000), alternating which goes
first. It takes each process's CPU time (user + system, from os.wait4) and prints the medians and
the median of the per-pair ratios; nothing here asserts a target. Both get a bytecode cache in a
temporary directory, filled by the setup runs.

    python bench/skip.py              # 10 pairs
    python bench/skip.py --pairs 30

Each pair also runs `python -c "import httpx"` (the floor: a process that can speak HTTP), and
the per-pair ratio of a skip to it is printed. `--python PY` runs both with another interpreter
(`PY -m custodian_runtime`), e.g. an environment with requirements/runtime.txt alone, as the image.

    python bench/skip.py --python /path/to/runtime-venv/bin/python

Targets: the median per-pair CPU ratio (30,000 tasks / 100 tasks) at most 1.2x; a skip at most
2x `import httpx`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from history import generated_domain

from custodian_hub import ReferenceHub, load_seed

REPO = Path(__file__).resolve().parent.parent
CUSTODIAN = str(Path(sys.executable).parent / "custodian")
SIZES = (100, 30_000)


PYTHON: list[str] = []  # --python: the interpreter both commands run under (else the venv's)


def command() -> list[str]:
    """`custodian`, as the venv's script or `PY -m custodian_runtime`."""
    return [*PYTHON, "-m", "custodian_runtime"] if PYTHON else [CUSTODIAN]


def floor_cpu(env: dict[str, str]) -> float:
    """CPU seconds of `python -c "import httpx"` as a whole process."""
    child = subprocess.Popen([*(PYTHON or [sys.executable]), "-c", "import httpx"], env=env)
    _, _, usage = os.wait4(child.pid, 0)
    return usage.ru_utime + usage.ru_stime


def measure_one(hub_url: str, memory: Path, env: dict[str, str], force: bool) -> tuple[str, float]:
    """`custodian run` as a whole process: its status and its CPU seconds (os.wait4)."""
    argv = [*command(), "run", "--domain", "gen", "--hub", hub_url, "--llm", "offline",
            "--memory", str(memory), "--canon", str(REPO / "canon"), "--json"]  # fmt: skip
    if force:
        argv.append("--force")
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        out.seek(0)
        text = out.read()
    return _status(text, os.waitstatus_to_exitcode(status)), usage.ru_utime + usage.ru_stime


def _status(out: bytes, code: int) -> str:
    try:
        return str(json.loads(out).get("status"))
    except ValueError:
        return f"exit {code}"


def main(argv: list[str] | None = None) -> int:
    """Seed, prepare and measure; print the figures."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--python", help="the interpreter to run custodian and the floor with")
    args = parser.parse_args(argv)
    PYTHON[:] = [args.python] if args.python else []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        env = dict(os.environ, PYTHONPYCACHEPREFIX=str(root / "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        hubs: dict[int, tuple[str, Path]] = {}
        for size in SIZES:
            db = root / f"hub-{size}.sqlite3"
            load_seed(db, generated_domain(size, datetime.now(UTC)))
            hub = stack.enter_context(ReferenceHub(db))
            hubs[size] = (hub.url, root / f"memory-{size}")
            setup = [measure_one(hub.url, hubs[size][1], env, force) for force in (True, False)]
            print(f"  {size} tasks: setup runs {', '.join(s for s, _ in setup)}", file=sys.stderr)
        samples: list[dict[int, tuple[str, float]]] = []
        for n in range(args.pairs):
            order = SIZES if n % 2 == 0 else SIZES[::-1]
            samples.append({size: measure_one(*hubs[size], env, False) for size in order})
            samples[-1][0] = ("floor", floor_cpu(env))
        report(samples)
    return 0


def report(samples: list[dict[int, tuple[str, float]]]) -> None:
    """The medians of each size and of the per-pair ratios."""
    small, big = SIZES
    print(f"skip: {len(samples)} interleaved pairs of whole `custodian run` processes")
    for size in SIZES:
        statuses = sorted({s[size][0] for s in samples})
        median = statistics.median(s[size][1] for s in samples)
        print(f"  {size:6} tasks  median cpu {median * 1000:7.1f} ms   statuses {statuses}")
    ratios = sorted(s[big][1] / max(s[small][1], 1e-6) for s in samples)
    print(
        f"  ratio cpu per pair ({big}/{small}): median {statistics.median(ratios):5.2f}x "
        f"(min {ratios[0]:5.2f}x, max {ratios[-1]:5.2f}x; target <= 1.2x)"
    )
    floor = statistics.median(s[0][1] for s in samples)
    over = sorted(s[small][1] / max(s[0][1], 1e-6) for s in samples)
    print(
        f'  a skip against `python -c "import httpx"` ({floor * 1000:.0f} ms) per pair: median '
        f"{statistics.median(over):5.2f}x (min {over[0]:5.2f}x, max {over[-1]:5.2f}x; "
        f"target <= 2x){' with ' + PYTHON[0] if PYTHON else ''}"
    )


if __name__ == "__main__":
    sys.exit(main())
