"""The example model zoo. Each module has PRESETS and make(**preset) -> ModelSpec."""
import importlib

MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]
# Models only the StableHLO path imports (llama's and moe's gradients scatter, which IREE's
# linalg input pipeline cannot express in upstream dialects; gpipe's transposed stage mask is a
# contraction of booleans with floats, which MLIR 22's linalg casts differently; the pipeline
# tactic rewrites StableHLO's while loops, so transformer_scan is read as StableHLO; `verify
# --ranks` converts its partitioned form to linalg).
STABLEHLO_ONLY = ["llama", "moe", "gpipe", "transformer_scan"]
ALL = MODELS + STABLEHLO_ONLY


def get(name):
    if name not in ALL:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(ALL)}")
    return importlib.import_module(f"{__name__}.{name}")


def spec(name, preset="small", **overrides):
    mod = get(name)
    if preset not in mod.PRESETS:
        raise KeyError(f"unknown preset {preset!r} for {name}; known: {', '.join(mod.PRESETS)}")
    kw = dict(mod.PRESETS[preset])
    kw.update(overrides)
    return mod.make(**kw), kw
