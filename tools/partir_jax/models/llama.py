"""LLaMA-style decoder training step with Adam, written as JAX users write it: `jnp.take`
token embeddings, RMSNorm, rotary position embeddings (RoPE), grouped-query attention (GQA:
fewer key/value heads than query heads, each shared by a group), a SwiGLU MLP and a
`take_along_axis` cross-entropy. Its gradient scatters into the embedding table, which the
linalg path (IREE's input pipeline) cannot import; partir reads its StableHLO directly.
Layers are a Python list: params/layers/<i>/<name>.
"""
import jax
import jax.numpy as jnp
import numpy as np

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, dense_init, normal

PRESETS = {
    "small": dict(batch=8, seq=16, width=64, heads=4, kv_heads=2, ffn=128, vocab=64, layers=2),
    "4layers": dict(batch=8, seq=16, width=64, heads=4, kv_heads=2, ffn=128, vocab=64, layers=4),
}


def init_params(kg, layers, width, heads, kv_heads, ffn, vocab):
    d_head = width // heads
    ones = lambda n: jnp.ones((n,), jnp.float32)
    ls = []
    for _ in range(layers):
        ls.append({
            "attn_norm": ones(width),
            "wq": dense_init(kg, width, heads * d_head),
            "wk": dense_init(kg, width, kv_heads * d_head),
            "wv": dense_init(kg, width, kv_heads * d_head),
            "wo": dense_init(kg, heads * d_head, width),
            "mlp_norm": ones(width),
            "w_gate": dense_init(kg, width, ffn),
            "w_up": dense_init(kg, width, ffn),
            "w_down": dense_init(kg, ffn, width),
        })
    return {"embed": normal(kg, (vocab, width), 0.02), "layers": ls, "norm": ones(width),
            "unembed": dense_init(kg, width, vocab)}


def rms_norm(x, scale, eps=1e-6):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * scale


def rope(x, base=10000.0):
    """Rotary embedding of [B, S, H, Dh]: pairs (x[..., :Dh/2], x[..., Dh/2:]) rotated by position."""
    s, dh = x.shape[1], x.shape[-1]
    inv = 1.0 / (base ** (jnp.arange(0, dh // 2, dtype=jnp.float32) / (dh // 2)))
    angles = jnp.arange(s, dtype=jnp.float32)[:, None] * inv[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x1, x2 = x[..., : dh // 2], x[..., dh // 2:]
    return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)


def attention(h, p, heads, kv_heads):
    b, s, d = h.shape
    dh = d // heads
    q = rope((h @ p["wq"]).reshape(b, s, heads, dh))
    k = rope((h @ p["wk"]).reshape(b, s, kv_heads, dh))
    v = (h @ p["wv"]).reshape(b, s, kv_heads, dh)
    group = heads // kv_heads
    k = jnp.repeat(k, group, axis=2)
    v = jnp.repeat(v, group, axis=2)
    scores = jnp.einsum("bshd,bthd->bhst", q, k) * (1.0 / np.sqrt(dh))
    causal = jnp.arange(s)[:, None] >= jnp.arange(s)[None, :]
    scores = jnp.where(causal[None, None], scores, jnp.float32(-1e9))
    probs = jax.nn.softmax(scores, axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", probs, v)
    return o.reshape(b, s, heads * dh) @ p["wo"]


def forward(params, tokens, heads, kv_heads):
    h = jnp.take(params["embed"], tokens, axis=0)
    for p in params["layers"]:
        h = h + attention(rms_norm(h, p["attn_norm"]), p, heads, kv_heads)
        m = rms_norm(h, p["mlp_norm"])
        h = h + (jax.nn.silu(m @ p["w_gate"]) * (m @ p["w_up"])) @ p["w_down"]
    return rms_norm(h, params["norm"]) @ params["unembed"]


def make(batch, seq, width, heads, kv_heads, ffn, vocab, layers, seed=3):
    kg = KeyGen(seed)
    params = init_params(kg, layers, width, heads, kv_heads, ffn, vocab)
    opt = adam_init(params, kg)
    tokens = jax.random.randint(kg(), (batch, seq), 0, vocab, jnp.int32)
    targets = jnp.roll(tokens, -1, axis=1)

    def loss_fn(params, tokens, targets):
        logp = jax.nn.log_softmax(forward(params, tokens, heads, kv_heads), axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    def step(params, opt, tokens, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens, targets)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, tokens, targets), ["params", "opt", "tokens", "targets"],
                     ["params", "opt", "loss"],
                     f"LLaMA-style training step (Adam): {layers} layers, width {width}, {heads} query heads, "
                     f"{kv_heads} key/value heads (GQA), RoPE, SwiGLU ffn {ffn}, vocab {vocab}, seq {seq}, "
                     f"batch {batch}; jnp.take embedding, take_along_axis loss")
