"""Inference Transformer with multi-query attention (forward only): H query heads share one K/V head."""
import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen
from .transformer import forward, init_params

BASE = dict(batch=8, seq=16, width=64, heads=4, ffn=128, vocab=64)
PRESETS = {
    "small": dict(BASE, layers=2),
    "48layers": dict(BASE, layers=48, width=128, ffn=512, vocab=256, seq=32),
}


def make(batch, seq, width, heads, ffn, vocab, layers, seed=2):
    kg = KeyGen(seed)
    params = init_params(kg, layers, width, heads, ffn, vocab, seq, kv_heads=1)
    tokens = jax.random.randint(kg(), (batch, seq), 0, vocab, jnp.int32)

    def infer(params, tokens):
        return (forward(params, tokens, heads, vocab, kv_heads=1),)

    return ModelSpec(infer, (params, tokens), ["params", "tokens"], ["logits"],
                     f"Multi-query-attention Transformer inference: {layers} layers, width {width}, "
                     f"{heads} query heads / 1 K/V head, ffn {ffn}, vocab {vocab}, seq {seq}, batch {batch}")
