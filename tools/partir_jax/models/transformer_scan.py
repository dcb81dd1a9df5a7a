"""The zoo Transformer (transformer.py) with its layers stacked and scanned, as MaxText writes
them by default: every layer parameter is one array [layers, ...] (params/layers/<name>) and
the forward pass is one `lax.scan` over them, so JAX's gradient is a reversed scan. Same
layer, same Adam step; what the pipeline tactic pipelines (docs/design.md, "Pipelining").
"""
from . import transformer
from .transformer import BASE

PRESETS = {
    # Four layers and a batch of 8: two stages of two layers, four microbatches of 2 rows.
    "small": dict(BASE, layers=4),
}


def make(**preset):
    return transformer.make(**preset, scanned=True)
