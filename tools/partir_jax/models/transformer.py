"""Decoder-only Transformer training step with Adam.

Pre-layer-norm blocks: causal softmax multi-head attention (reshapes to [B,S,H,Dh] and batch matmuls)
and a GELU MLP. Token embedding is a one-hot matmul (so its gradient is a matmul, not a scatter).
Layers are a Python list, so the step is unrolled: params/layers/<i>/<name>.
"""
import jax
import jax.numpy as jnp
import numpy as np

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, dense_init, gelu, layer_norm, normal, one_hot, softmax_xent

BASE = dict(batch=8, seq=16, width=64, heads=4, ffn=128, vocab=64)
PRESETS = {
    "small": dict(BASE, layers=2),
    "1layer": dict(BASE, layers=1),
    "4layers": dict(BASE, layers=4),
    # Deep enough that its layers fold when found from the dataflow alone (tests/auto.rs).
    "8layers": dict(BASE, layers=8),
    "12layers": dict(BASE, layers=12, width=128, ffn=512, vocab=256, seq=32),
    "24layers": dict(BASE, layers=24, width=128, ffn=512, vocab=256, seq=32),
    "48layers": dict(BASE, layers=48, width=128, ffn=512, vocab=256, seq=32),
    # The 48-layer preset cut to 4 layers: the automatic partitioner's search time grows with
    # layers only as fast as pricing a plan does (benches/auto).
    "4layers-128": dict(BASE, layers=4, width=128, ffn=512, vocab=256, seq=32),
    # Wide enough that compute, not link latency, dominates on the simulated devices: where
    # Megatron and batch parallelism pay (benches/auto).
    "4layers-1024": dict(BASE, batch=16, layers=4, width=1024, heads=16, ffn=4096, vocab=1024, seq=128),
}


def init_params(kg, layers, width, heads, ffn, vocab, seq, kv_heads=None):
    d_head = width // heads
    kv_width = width if kv_heads is None else kv_heads * d_head
    ones = lambda n: jnp.ones((n,), jnp.float32)
    zeros = lambda n: jnp.zeros((n,), jnp.float32)
    ls = []
    for _ in range(layers):
        ls.append({
            "ln1": {"scale": ones(width), "bias": zeros(width)},
            "wq": dense_init(kg, width, width),
            "wk": dense_init(kg, width, kv_width),
            "wv": dense_init(kg, width, kv_width),
            "wo": dense_init(kg, width, width),
            "ln2": {"scale": ones(width), "bias": zeros(width)},
            "w1": dense_init(kg, width, ffn), "b1": zeros(ffn),
            "w2": dense_init(kg, ffn, width), "b2": zeros(width),
        })
    return {
        "embed": normal(kg, (vocab, width), 0.02),
        "pos": normal(kg, (seq, width), 0.02),
        "layers": ls,
        "ln_f": {"scale": ones(width), "bias": zeros(width)},
        "unembed": dense_init(kg, width, vocab),
    }


def attention(h, p, heads, kv_heads):
    b, s, d = h.shape
    dh = d // heads
    q = (h @ p["wq"]).reshape(b, s, heads, dh)
    k = (h @ p["wk"]).reshape(b, s, kv_heads, dh)
    v = (h @ p["wv"]).reshape(b, s, kv_heads, dh)
    if kv_heads == 1:  # multi-query: one K/V head shared by all query heads
        scores = jnp.einsum("bshd,btd->bhst", q, k[:, :, 0, :])
    else:
        scores = jnp.einsum("bshd,bthd->bhst", q, k)
    scores = scores * (1.0 / np.sqrt(dh))
    causal = jnp.arange(s)[:, None] >= jnp.arange(s)[None, :]
    scores = jnp.where(causal[None, None], scores, jnp.float32(-1e9))
    probs = jax.nn.softmax(scores, axis=-1)
    if kv_heads == 1:
        o = jnp.einsum("bhst,btd->bshd", probs, v[:, :, 0, :])
    else:
        o = jnp.einsum("bhst,bthd->bshd", probs, v)
    return o.reshape(b, s, d) @ p["wo"]


def block(h, p, heads, kv_heads):
    """One pre-LN layer: attention, then the GELU MLP, each added to the residual."""
    a = layer_norm(h, p["ln1"]["scale"], p["ln1"]["bias"])
    h = h + attention(a, p, heads, kv_heads)
    m = layer_norm(h, p["ln2"]["scale"], p["ln2"]["bias"])
    return h + gelu(m @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def forward(params, tokens, heads, vocab, kv_heads=None, scanned=False):
    """`scanned`: params["layers"] is one stacked tree, run by one `lax.scan`."""
    kv_heads = heads if kv_heads is None else kv_heads
    h = one_hot(tokens, vocab) @ params["embed"] + params["pos"][None]
    if scanned:
        h = jax.lax.scan(lambda h, p: (block(h, p, heads, kv_heads), None), h, params["layers"])[0]
    for i, p in enumerate([] if scanned else params["layers"]):
        # The scope names the layer in each op's location (import-jax --locations), backward
        # ops included: `transpose(jvp(layers/3))`.
        with jax.named_scope(f"layers/{i}"):
            h = block(h, p, heads, kv_heads)
    h = layer_norm(h, params["ln_f"]["scale"], params["ln_f"]["bias"])
    return h @ params["unembed"]


def make(batch, seq, width, heads, ffn, vocab, layers, seed=1, scanned=False):
    """`scanned`: the layers stacked ([layers, ...] per parameter) and scanned
    (transformer_scan.py)."""
    kg = KeyGen(seed)
    params = init_params(kg, layers, width, heads, ffn, vocab, seq)
    if scanned:
        params["layers"] = jax.tree.map(lambda *ls: jnp.stack(ls), *params["layers"])
    opt = adam_init(params, kg)
    tokens = jax.random.randint(kg(), (batch, seq), 0, vocab, jnp.int32)
    targets = jnp.roll(tokens, -1, axis=1)

    def loss_fn(params, tokens, targets):
        return softmax_xent(forward(params, tokens, heads, vocab, scanned=scanned), targets, vocab)

    def step(params, opt, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, tokens, targets), ["params", "opt", "tokens", "targets"],
                     ["params", "opt", "loss"],
                     f"Transformer training step (Adam){', layers stacked and scanned' if scanned else ''}: "
                     f"{layers} layers, width {width}, {heads} heads, "
                     f"ffn {ffn}, vocab {vocab}, seq {seq}, batch {batch}")
