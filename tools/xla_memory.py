"""partir's simulated peak memory per device against XLA's own accounting of the same program.

    tools/.venv/bin/python tools/xla_memory.py PROGRAM.mlir REPORT.json [--json OUT]

PROGRAM.mlir is `partir partition ... --stage xla`'s device-local StableHLO (one replica per
device), REPORT.json that run's `--report`. XLA compiles the program for its replicas on the CPU
backend (compiling allocates nothing, so programs of billions of parameters are fine) and its
buffer assignment says what one device holds: arguments, outputs and temporaries, less what
outputs alias of arguments (`compiled.memory_analysis()`'s figures; the peak is
`argument + output + temp - alias`). XLA holds each output in a buffer of its own for the whole
step, where partir's peak counts a result from the op that makes it: the temporaries alone
(XLA's `temp`, partir's `temporaries_peak_bytes`) are compared too. Prints both peaks and their
ratios; the exit status is 0.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path


def replicas(text: str) -> int:
    found = re.search(r"mhlo\.num_replicas = (\d+)", text)
    return int(found.group(1)) if found else 1


def xla_stats(text: str) -> dict:
    """XLA's memory accounting of `text` compiled for its replicas, one CPU device each."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from partir_jax.xla_run import compile_replicas

    executable, _ = compile_replicas(text, replicas(text))
    return stats(executable)


def stats(executable) -> dict:
    """XLA's memory accounting of a compiled executable: per device, its arguments, outputs,
    temporaries and what outputs alias of arguments, and the peak they make."""
    stats = executable.get_compiled_memory_stats()
    figures = {
        "argument_bytes": stats.argument_size_in_bytes,
        "output_bytes": stats.output_size_in_bytes,
        "temp_bytes": stats.temp_size_in_bytes,
        "alias_bytes": stats.alias_size_in_bytes,
    }
    figures["peak_bytes"] = (figures["argument_bytes"] + figures["output_bytes"] + figures["temp_bytes"]
                             - figures["alias_bytes"])
    return figures


def partir_peak(report: Path) -> tuple[float, dict]:
    last = json.loads(report.read_text())["tactics"][-1]["report"]
    return last["totals"]["peak_memory_bytes"], last["memory"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program", type=Path)
    parser.add_argument("report", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    text = args.program.read_text()
    count = replicas(text)
    # Before JAX is imported: one CPU device per replica, CPU only.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + f" --xla_force_host_platform_device_count={count}").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    xla = xla_stats(text)
    peak, memory = partir_peak(args.report)
    unit, scale = ("GiB", 2.0 ** 30) if peak >= 2.0 ** 30 else ("MiB", 2.0 ** 20)
    print(f"{args.program.name}: {count} replicas, per device in {unit}")
    print(f"  XLA (CPU): peak {xla['peak_bytes'] / scale:.2f} = arguments {xla['argument_bytes'] / scale:.2f} "
          f"+ outputs {xla['output_bytes'] / scale:.2f} + temporaries {xla['temp_bytes'] / scale:.2f} "
          f"- aliased {xla['alias_bytes'] / scale:.2f}")
    print(f"  partir:    peak {peak / scale:.2f} (arguments {memory.get('arguments_bytes', 0) / scale:.2f}, "
          f"results {memory.get('results_bytes', 0) / scale:.2f})")
    print(f"  partir / XLA = {peak / xla['peak_bytes']:.3f}")
    temporaries = memory.get("temporaries_peak_bytes")
    # partir's figures as XLA accounts them: arguments and results held for the whole step,
    # plus the temporaries' peak.
    as_xla = None
    if temporaries is not None and xla["temp_bytes"] > 0:
        as_xla = memory.get("arguments_bytes", 0) + memory.get("results_bytes", 0) + temporaries
        print(f"  temporaries: partir {temporaries / scale:.2f}, XLA {xla['temp_bytes'] / scale:.2f}, "
              f"partir / XLA = {temporaries / xla['temp_bytes']:.3f}")
        print(f"  accounted as XLA does (outputs held throughout): partir {as_xla / scale:.2f}, "
              f"partir / XLA = {as_xla / xla['peak_bytes']:.3f}")
    if args.json:
        args.json.write_text(json.dumps({"xla": xla, "partir_peak_bytes": peak,
                                         "partir_temporaries_bytes": temporaries,
                                         "partir_as_xla_bytes": as_xla}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
