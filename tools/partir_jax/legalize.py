"""`python -m partir_jax.legalize < IN.mlir > OUT.mlir`: a StableHLO program, as JAX emits it or
as partir partitioned it (device-local, with `partir_hlo` collectives), in upstream MLIR 22
dialects (linalg, tensor, arith, math, scf), which `partir verify --ranks` lowers and runs on
MPI ranks. The conversion is IREE's StableHLO input pipeline, the importer's; partir's own ops
pass through it untouched. Exit 1 with the reason when something does not convert (an op IREE
keeps in its own dialects, such as a scatter's `iree_linalg_ext.scatter`).
"""
import sys

from .importer import (ImportError_, check_no_mixed_contractions, check_upstream, reprint_mlir22,
                       stablehlo_to_linalg)

# partir's dialects: the mesh and the collectives `partir-to-mpi` lowers.
PARTIR_DIALECTS = ("partir", "partir_hlo")


def legalize(text: str) -> str:
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
