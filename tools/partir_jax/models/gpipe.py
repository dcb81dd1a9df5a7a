"""GPipe written as GSPMD and MaxText write it, one SPMD program: residual MLP layers stacked
per stage ([stages, layers/stages, ...], split on a `stage` mesh axis), a state buffer
[stages, microbatch, width] that rotates one stage per tick (`jnp.roll`), microbatches + stages - 1
ticks, each stage keeping its own outputs; JAX's transpose of it is the backward pipeline.
partir partitions it as it is (docs/design.md, "Pipelining: the chosen form")."""
import jax
import jax.numpy as jnp
from jax import lax

from ..importer import ModelSpec
from .common import KeyGen, normal

PRESETS = {
    "small": dict(stages=2, layers=4, microbatches=4, microbatch=4, width=16, ffn=32),
}


def make(stages, layers, microbatches, microbatch, width, ffn, seed=0):
    S, M, D, F = stages, microbatches, width, ffn
    per_stage = layers // stages
    kg = KeyGen(seed)
    params = {"w1": normal(kg, (S, per_stage, D, F), D ** -0.5),
              "w2": normal(kg, (S, per_stage, F, D), F ** -0.5)}
    x = normal(kg, (M, microbatch, D))
    y = normal(kg, (M, microbatch, D))

    def stage_fn(w1, w2, h):  # one stage's layers on one microbatch: [mb, D]
        def layer(h, w):
            return h + jnp.tanh(h @ w[0]) @ w[1], None
        return lax.scan(layer, h, (w1, w2))[0]

    def pipeline(params, x):
        first = (jnp.arange(S) == 0)[:, None, None]
        def tick(carry, t):
            state, outs = carry
            inp = lax.dynamic_index_in_dim(x, jnp.minimum(t, M - 1), 0, keepdims=False)
            state = jnp.where(first, inp[None], jnp.roll(state, 1, axis=0))
            state = jax.vmap(stage_fn)(params["w1"], params["w2"], state)
            # stage s has finished microbatch t - s
            done = (jnp.arange(M)[None, :] == (t - jnp.arange(S))[:, None])[:, :, None, None]
            return (state, jnp.where(done, state[:, None], outs)), None
        carry = (jnp.zeros((S,) + x.shape[1:], x.dtype), jnp.zeros((S,) + x.shape, x.dtype))
        (_, outs), _ = lax.scan(tick, carry, jnp.arange(M + S - 1))
        return jnp.einsum("s,smbd->mbd", (jnp.arange(S) == S - 1).astype(x.dtype), outs)

    def loss_fn(params, x, y):
        return jnp.mean((pipeline(params, x) - y) ** 2)

    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        return params, loss

    return ModelSpec(step, (params, x, y), ["params", "x", "y"], ["params", "loss"],
                     f"GPipe (SPMD form) training step: {layers} residual MLP layers of width {D} "
                     f"(ffn {F}) on {S} stages, {M} microbatches of {microbatch}, MSE, SGD")
