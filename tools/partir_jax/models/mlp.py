"""MLP training step: 2 dense layers, softmax cross-entropy, SGD with momentum."""
import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen, dense_init, normal, one_hot, sgd_momentum_update, softmax_xent

PRESETS = {
    "small": dict(batch=32, d_in=64, hidden=256, classes=10),
    "large": dict(batch=256, d_in=1024, hidden=4096, classes=1024),
}


def make(batch, d_in, hidden, classes, seed=0):
    kg = KeyGen(seed)
    params = {"w1": dense_init(kg, d_in, hidden), "b1": jnp.zeros((hidden,), jnp.float32) + 0.01,
              "w2": dense_init(kg, hidden, classes), "b2": jnp.zeros((classes,), jnp.float32)}
    # momentum as after a few steps (non-zero), so the fixture data checks the update too
    opt = {"momentum": jax.tree.map(lambda p: normal(kg, p.shape, 1e-3), params)}
    x = normal(kg, (batch, d_in))
    y = jax.random.randint(kg(), (batch,), 0, classes, jnp.int32)

    def loss_fn(params, x, y):
        h = jax.nn.relu(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        return softmax_xent(logits, y, classes)

    def step(params, opt, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params, opt = sgd_momentum_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, x, y), ["params", "opt", "x", "y"], ["params", "opt", "loss"],
                     f"MLP training step (SGD with momentum): x[{batch},{d_in}] -> {hidden} -> {classes}")
