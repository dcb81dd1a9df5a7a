"""The zoo Transformer (transformer.py) with its layers stacked and scanned, as MaxText writes
them by default: every layer parameter is one array [layers, ...] (params/layers/<name>) and
the forward pass is one `lax.scan` over them, so JAX's gradient is a reversed scan. Same
layer, same Adam step; what the pipeline tactic pipelines (docs/design.md, "Pipelining").
"""
import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, gelu, layer_norm, one_hot, softmax_xent
from .transformer import BASE, attention, init_params

PRESETS = {
    # Four layers and a batch of 8: two stages of two layers, four microbatches of 2 rows.
    "small": dict(BASE, layers=4),
}


def forward(params, tokens, heads, vocab):
    h = one_hot(tokens, vocab) @ params["embed"] + params["pos"][None]

    def layer(h, p):
        a = layer_norm(h, p["ln1"]["scale"], p["ln1"]["bias"])
        h = h + attention(a, p, heads, heads)
        m = layer_norm(h, p["ln2"]["scale"], p["ln2"]["bias"])
        return h + gelu(m @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"], None

    h = jax.lax.scan(layer, h, params["layers"])[0]
    h = layer_norm(h, params["ln_f"]["scale"], params["ln_f"]["bias"])
    return h @ params["unembed"]


def make(batch, seq, width, heads, ffn, vocab, layers, seed=1):
    kg = KeyGen(seed)
    params = init_params(kg, layers, width, heads, ffn, vocab, seq)
    params["layers"] = jax.tree.map(lambda *ls: jnp.stack(ls), *params["layers"])
    opt = adam_init(params, kg)
    tokens = jax.random.randint(kg(), (batch, seq), 0, vocab, jnp.int32)
    targets = jnp.roll(tokens, -1, axis=1)

    def loss_fn(params, tokens, targets):
        return softmax_xent(forward(params, tokens, heads, vocab), targets, vocab)

    def step(params, opt, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, tokens, targets), ["params", "opt", "tokens", "targets"],
                     ["params", "opt", "loss"],
                     f"Transformer training step (Adam), layers stacked and scanned: {layers} layers, "
                     f"width {width}, {heads} heads, ffn {ffn}, vocab {vocab}, seq {seq}, batch {batch}")
