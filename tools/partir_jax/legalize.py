"""`python -m partir_jax.legalize < IN.mlir > OUT.mlir`: a StableHLO program, as JAX emits it or
as partir partitioned it (device-local, with `partir_hlo` collectives), in upstream MLIR 22
dialects (linalg, tensor, arith, math, scf), which `partir verify --ranks` lowers and runs on
MPI ranks. The conversion is IREE's StableHLO input pipeline, the importer's; partir's own ops
pass through it untouched. Scatters become loops first (`scatter_loops`: IREE lowers a scatter
only into its own dialect). Exit 1 with the reason when something does not convert (an op IREE
keeps in its own dialects, such as a scatter whose combiner is not one binary op).
"""
import sys

from .importer import (ImportError_, check_no_mixed_contractions, check_upstream, reprint_mlir22,
                       stablehlo_to_linalg)
from .scatter_loops import rewrite as scatters_as_loops

# partir's dialects: the mesh and the collectives `partir-to-mpi` lowers.
PARTIR_DIALECTS = ("partir", "partir_hlo")


def legalize(text: str) -> str:
    text, left = scatters_as_loops(text)
    if left:
        print(f"scatters left to IREE: {'; '.join(left)}", file=sys.stderr)
    generic = stablehlo_to_linalg(text, unregistered=True)
    check_upstream(generic, also=PARTIR_DIALECTS)
    text = reprint_mlir22(generic, ["func.func(cse)"], unregistered=True)
    check_no_mixed_contractions(text)
    return text


def main() -> int:
    try:
        sys.stdout.write(legalize(sys.stdin.read()))
    except ImportError_ as error:
        print(f"{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
