"""`make bench` (startup part): how long does `custodian --help` take next to a bare Python?

It runs the venv's `custodian --help` and `python -c "import argparse"` as whole processes, in
pairs, alternating which goes first, and takes each process's wall time (perf_counter around the
spawn and the wait) and CPU time (user + system, from os.wait4). It prints the medians and the
median of the per-pair ratios; nothing here asserts a target. Both get a bytecode cache in a
temporary directory (PYTHONPYCACHEPREFIX), filled by a warm-up, as an installed package has one,
whatever PYTHONDONTWRITEBYTECODE says; `--no-bytecode` measures with the caller's environment.
`--before DIR` adds, interleaved in the same rounds, `custodian --help` of another source tree
(DIR holds its `custodian_runtime/`, first on PYTHONPATH): an earlier commit, before and after.

    python bench/startup.py              # 20 pairs
    python bench/startup.py --pairs 50
    mkdir -p .cache/before && git archive REF runtime | tar -x -C .cache/before && \
        python bench/startup.py --before .cache/before/runtime   # REF: a commit to compare

Target: the median per-pair ratio (custodian --help / import argparse) at most 3x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CUSTODIAN = str(Path(sys.executable).parent / "custodian")
COMMANDS = {
    "custodian --help": [CUSTODIAN, "--help"],
    "import argparse": [sys.executable, "-c", "import argparse"],
}
BEFORE = "before: --help"  # the other source tree's `custodian --help`, with --before


def timed_process(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one process running `argv` to its end."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(
    pairs: int, env: dict[str, str], before: str | None
) -> list[dict[str, tuple[float, float]]]:
    """`pairs` figures per command, the order alternating from pair to pair."""
    runs = {name: (argv, env) for name, argv in COMMANDS.items()}
    if before is not None:
        runs[BEFORE] = ([CUSTODIAN, "--help"], {**env, "PYTHONPATH": before})
    names = list(runs)
    found = []
    for n in range(pairs):
        order = names if n % 2 == 0 else names[::-1]
        found.append({name: timed_process(*runs[name]) for name in order})
    return found


def report(samples: list[dict[str, tuple[float, float]]], bytecode: bool) -> None:
    """The medians of each command and of the per-pair ratios."""
    cache = "with a bytecode cache" if bytecode else "with the caller's environment"
    print(f"startup: {len(samples)} interleaved pairs of whole processes, {cache}")
    helps = [name for name in samples[0] if name != "import argparse"]
    for index, kind in enumerate(("wall", "cpu (user+sys)")):
        for name in samples[0]:
            median = statistics.median(s[name][index] for s in samples)
            print(f"  {name:18} median {kind} {median * 1000:7.1f} ms")
        for name in helps:
            ratios = sorted(
                s[name][index] / max(s["import argparse"][index], 1e-6) for s in samples
            )
            print(
                f"  ratio {kind} per pair ({name} / import argparse): median "
                f"{statistics.median(ratios):5.2f}x (min {ratios[0]:5.2f}x, max {ratios[-1]:5.2f}x;"
                " target <= 3x)"
            )


def main(argv: list[str] | None = None) -> int:
    """Measure and print the ratios."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--no-bytecode", action="store_true", help="keep the caller's environment")
    parser.add_argument("--before", metavar="DIR", help="another tree's runtime/, to compare")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ)
        if not args.no_bytecode:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = cache
        before = str(Path(args.before).resolve()) if args.before else None
        measure(1, env, before)  # warm-up: the page cache and the bytecode cache
        report(measure(args.pairs, env, before), not args.no_bytecode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
