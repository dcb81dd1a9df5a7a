"""The example model zoo. Each module has PRESETS and make(**preset) -> ModelSpec."""
import importlib

MODELS = ["mlp", "transformer", "unet", "gns", "mqa"]


def get(name):
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    return importlib.import_module(f"{__name__}.{name}")


def spec(name, preset="small", **overrides):
    mod = get(name)
    if preset not in mod.PRESETS:
        raise KeyError(f"unknown preset {preset!r} for {name}; known: {', '.join(mod.PRESETS)}")
    kw = dict(mod.PRESETS[preset])
    kw.update(overrides)
    return mod.make(**kw), kw
