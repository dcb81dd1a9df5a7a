# lit configuration for partir. Run everything with `cargo test` (tests/lit.rs runs lit on
# test/ after building), or directly: `lit -sv test` once `cargo build` has run.
#
# Substitutions:
#   %plugin        --load-dialect-plugin=<libpartir.so> --load-pass-plugin=<libpartir.so>
#   %partir_lib    path of libpartir.so
#   %cc / %cxx     Debian's clang-22 / clang++-22
#   %capi_cflags   include flags for mlir-c and partir-c headers
#   %capi_libs     link flags for a C program using the MLIR and partir C APIs
#   %examples      the examples/ folder
# PATH starts with the build folder (partir-opt, partir) and the LLVM 22 prefix's bin (mlir-opt,
# FileCheck, not, mlir-runner; tools/partir_jax/toolchain.py says which prefix).
import glob
import os
import sys

import lit.formats

config.name = "partir"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".c", ".toml.test"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.excludes = ["Inputs", "examples", "target", "tools", "benches", "include", "src"]

root = config.test_source_root
sys.path.insert(0, os.path.join(root, "tools"))
from partir_jax.toolchain import llvm_prefix  # noqa: E402  (.cargo/config.toml's MLIR_SYS_220_PREFIX)

llvm = str(llvm_prefix())
build = os.environ.get("PARTIR_BUILD_DIR", os.path.join(root, "target", "debug"))
# Test outputs (%t files) go under target/, never into the source tree.
config.test_exec_root = os.path.join(root, "target", "lit")
lib = os.path.join(build, "libpartir.so")
if not os.path.exists(lib):
    lit_config.fatal(f"{lib} not found: run `cargo build` first (or set PARTIR_BUILD_DIR)")

config.environment["PATH"] = os.pathsep.join(
    [build, os.path.join(llvm, "bin"), config.environment.get("PATH", os.environ.get("PATH", ""))]
)
for name in ("HOME", "TMPDIR"):
    if name in os.environ:
        config.environment[name] = os.environ[name]

capi_archives = sorted(glob.glob(os.path.join(llvm, "lib", "libMLIRCAPI*.a")))
config.substitutions.extend(
    [
        ("%plugin", f"--load-dialect-plugin={lib} --load-pass-plugin={lib}"),
        ("%partir_lib", lib),
        ("%cxx", os.path.join(llvm, "bin", "clang++")),
        ("%cc", os.path.join(llvm, "bin", "clang")),
        ("%capi_cflags", f"-I{os.path.join(root, 'include')} -I{os.path.join(llvm, 'include')}"),
        (
            "%capi_libs",
            f"-L{build} -lpartir -Wl,-rpath,{build} -Wl,--start-group {' '.join(capi_archives)} "
            f"-Wl,--end-group -L{llvm}/lib -lMLIR -lLLVM -Wl,-rpath,{llvm}/lib",
        ),
        ("%examples", os.path.join(root, "examples")),
    ]
)
