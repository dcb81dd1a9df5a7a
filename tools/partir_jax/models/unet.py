"""UNet-like convolutional network training step (NHWC, HWIO kernels) with Adam.

Two 3x3 conv levels with 2x2 average-pool down-sampling, nearest-neighbour up-sampling, a skip
connection (channel concat), and a per-pixel MSE loss. Convs use stride 1 and SAME padding
(stablehlo.convolution -> tensor.pad + linalg.conv_2d_nhwc_hwcf).
"""
import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, normal

PRESETS = {
    "small": dict(batch=8, size=16, channels=4, base=16),
    "large": dict(batch=32, size=64, channels=4, base=64),
}


_DN = ("NHWC", "HWIO", "NHWC")


def _conv(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_DN)


def _flip(w, axis):
    """Reverse along `axis` as slices + concat. JAX's own conv gradient uses lax.rev, which IREE lowers
    to a linalg.generic that gathers with tensor.extract (opaque to a partitioner); slices and a
    concat are not."""
    k = w.shape[axis]
    if k == 1:
        return w
    parts = [jax.lax.slice_in_dim(w, i, i + 1, axis=axis) for i in reversed(range(k))]
    return jnp.concatenate(parts, axis=axis)


@jax.custom_vjp
def conv2d(x, w):
    """Stride-1 SAME conv (odd kernel) whose input gradient uses a slice/concat kernel flip."""
    return _conv(x, w)


def _conv_fwd(x, w):
    return _conv(x, w), (x, w)


def _conv_bwd(res, dy):
    x, w = res
    # dx = conv(dy, flip_hw(w) with in/out channels swapped): the transposed conv for stride 1, SAME.
    wt = jnp.transpose(_flip(_flip(w, 0), 1), (0, 1, 3, 2))
    dx = _conv(dy, wt)
    # dw: JAX's own rule (a conv of x with dy; it needs no reversal).
    _, vjp_w = jax.vjp(lambda w_: _conv(x, w_), w)
    (dw,) = vjp_w(dy)
    return dx, dw


conv2d.defvjp(_conv_fwd, _conv_bwd)


def conv(x, w, b):
    return conv2d(x, w) + b


def avg_pool2(x):
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).mean(axis=(2, 4))


def upsample2(x):
    n, h, w, c = x.shape
    return jnp.broadcast_to(x[:, :, None, :, None, :], (n, h, 2, w, 2, c)).reshape(n, 2 * h, 2 * w, c)


def make(batch, size, channels, base, seed=3):
    kg = KeyGen(seed)

    def block(cin, cout, k=3):
        return {"w": normal(kg, (k, k, cin, cout), (k * k * cin) ** -0.5), "b": jnp.zeros((cout,), jnp.float32)}

    params = {
        "enc1": {"conv1": block(channels, base), "conv2": block(base, base)},
        "enc2": {"conv1": block(base, 2 * base), "conv2": block(2 * base, 2 * base)},
        "dec1": {"conv1": block(3 * base, base), "conv2": block(base, base)},
        "out": block(base, channels, k=1),
    }
    opt = adam_init(params, kg)
    x = normal(kg, (batch, size, size, channels))
    y = normal(kg, (batch, size, size, channels))

    def apply(params, x):
        def cblock(p, h):
            h = jax.nn.relu(conv(h, p["conv1"]["w"], p["conv1"]["b"]))
            return jax.nn.relu(conv(h, p["conv2"]["w"], p["conv2"]["b"]))

        e1 = cblock(params["enc1"], x)
        e2 = cblock(params["enc2"], avg_pool2(e1))
        d1 = cblock(params["dec1"], jnp.concatenate([upsample2(e2), e1], axis=-1))
        return conv(d1, params["out"]["w"], params["out"]["b"])

    def loss_fn(params, x, y):
        return jnp.mean(jnp.square(apply(params, x) - y))

    def step(params, opt, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, x, y), ["params", "opt", "x", "y"], ["params", "opt", "loss"],
                     f"UNet-like conv net training step (Adam): x[{batch},{size},{size},{channels}], base {base}")
