"""Mixture-of-Experts decoder training step (Mixtral-like, Adam), written as GShard writes its
MoE layer: LLaMA's attention (RMSNorm, RoPE, grouped-query attention, from `llama.py`), then a
router picking the top 2 of E experts per token (`jax.lax.top_k`), each expert's capacity C
filled in token order (a cumsum per group), and the dispatch and combine as einsums over
one-hot `[G, S, E, C]` masks:

    expert_in = einsum("gsec,gsd->egcd", dispatch, x)      # tokens to their experts' slots
    out       = SwiGLU per expert on [E, G, C, D]          # experts' weights [E, D, F], [E, F, D]
    y         = einsum("gsec,egcd->gsd", combine, out)     # back, weighted by the router

A group is one example (G = batch). Tokens past an expert's capacity are dropped (their MoE
output is 0; the residual carries them). Layers are a Python list: params/layers/<i>/<name>.
Expert parallelism splits the experts' weights on their leading dim and the batch on the same
axis (GShard): the dispatch then moves tokens between devices as one all_to_all.
"""
import math

import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, dense_init, normal
from .llama import attention, rms_norm

PRESETS = {
    "small": dict(batch=8, seq=16, width=32, heads=4, kv_heads=2, ffn=64, vocab=64, layers=2,
                  experts=4, top=2, capacity_factor=2.0),
}


def init_params(kg, layers, width, heads, kv_heads, ffn, vocab, experts):
    d_head = width // heads
    ones = lambda n: jnp.ones((n,), jnp.float32)
    stacked = lambda fan_in, fan_out: jnp.stack([dense_init(kg, fan_in, fan_out) for _ in range(experts)])
    ls = []
    for _ in range(layers):
        ls.append({
            "attn_norm": ones(width),
            "wq": dense_init(kg, width, heads * d_head),
            "wk": dense_init(kg, width, kv_heads * d_head),
            "wv": dense_init(kg, width, kv_heads * d_head),
            "wo": dense_init(kg, heads * d_head, width),
            "mlp_norm": ones(width),
            "router": dense_init(kg, width, experts),
            "w_gate": stacked(width, ffn),
            "w_up": stacked(width, ffn),
            "w_down": stacked(ffn, width),
        })
    return {"embed": normal(kg, (vocab, width), 0.02), "layers": ls, "norm": ones(width),
            "unembed": dense_init(kg, width, vocab)}


def one_hot(index, n):
    return (index[..., None] == jnp.arange(n, dtype=index.dtype)).astype(jnp.float32)


def moe(x, p, experts, top, capacity_factor):
    """GShard's MoE layer on [G, S, D]: top-`top` routing, capacity per expert and group."""
    g, s, _ = x.shape
    capacity = int(math.ceil(s * top / experts * capacity_factor))
    probs = jax.nn.softmax(x @ p["router"], axis=-1)                     # [G, S, E]
    gates, chosen = jax.lax.top_k(probs, top)                            # [G, S, top]
    dispatch = jnp.zeros((g, s, experts, capacity), jnp.float32)
    combine = jnp.zeros((g, s, experts, capacity), jnp.float32)
    filled = jnp.zeros((g, 1, experts), jnp.float32)
    for k in range(top):
        mask = one_hot(chosen[..., k], experts)                          # [G, S, E]
        position = jnp.cumsum(mask, axis=1) - 1.0 + filled               # slot in its expert
        mask = mask * (position < capacity)
        filled = filled + jnp.sum(mask, axis=1, keepdims=True)
        slot = one_hot(position.astype(jnp.int32), capacity) * mask[..., None]   # [G, S, E, C]
        dispatch = dispatch + slot
        combine = combine + gates[..., k, None, None] * slot
    expert_in = jnp.einsum("gsec,gsd->egcd", dispatch, x)
    hidden = jax.nn.silu(jnp.einsum("egcd,edf->egcf", expert_in, p["w_gate"])) \
        * jnp.einsum("egcd,edf->egcf", expert_in, p["w_up"])
    out = jnp.einsum("egcf,efd->egcd", hidden, p["w_down"])
    return jnp.einsum("gsec,egcd->gsd", combine, out)


def forward(params, tokens, heads, kv_heads, experts, top, capacity_factor):
    h = jnp.take(params["embed"], tokens, axis=0)
    for p in params["layers"]:
        h = h + attention(rms_norm(h, p["attn_norm"]), p, heads, kv_heads)
        h = h + moe(rms_norm(h, p["mlp_norm"]), p, experts, top, capacity_factor)
    return rms_norm(h, params["norm"]) @ params["unembed"]


def make(batch, seq, width, heads, kv_heads, ffn, vocab, layers, experts, top, capacity_factor, seed=5,
         abstract=False):
    """`abstract=True`: the arguments are `jax.ShapeDtypeStruct`s (nothing is materialised; for
    lowering and pricing at Mixtral's size, `tools/published_models.py mixtral-8x7b`)."""
    kg = KeyGen(seed)
    if abstract:
        params = jax.eval_shape(lambda: init_params(KeyGen(seed), layers, width, heads, kv_heads, ffn, vocab,
                                                    experts))
        opt = jax.eval_shape(lambda p: adam_init(p, KeyGen(seed)), params)
        tokens = targets = jax.ShapeDtypeStruct((batch, seq), jnp.int32)
    else:
        params = init_params(kg, layers, width, heads, kv_heads, ffn, vocab, experts)
        opt = adam_init(params, kg)
        tokens = jax.random.randint(kg(), (batch, seq), 0, vocab, jnp.int32)
        targets = jnp.roll(tokens, -1, axis=1)

    def loss_fn(params, tokens, targets):
        logits = forward(params, tokens, heads, kv_heads, experts, top, capacity_factor)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def step(params, opt, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, tokens, targets), ["params", "opt", "tokens", "targets"],
                     ["params", "opt", "loss"],
                     f"Mixture-of-Experts decoder training step (Adam): {layers} layers, width {width}, "
                     f"{heads} query heads, {kv_heads} key/value heads, {experts} experts of SwiGLU ffn {ffn}, "
                     f"top-{top} routing, capacity factor {capacity_factor}, vocab {vocab}, seq {seq}, batch {batch}; "
                     "GShard dispatch and combine einsums")
