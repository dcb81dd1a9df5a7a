"""Graph network (GNS-like encode-process-decode) training step with Adam on a batch of graphs.

Edge updates gather sender/receiver node latents; node updates segment-sum incoming messages. Both are
one-hot matmuls (einsum with an iota-compare one-hot of the edge indices) instead of gather/scatter,
so that IREE's pipeline emits only upstream linalg (see tools/README.md).
"""
import jax
import jax.numpy as jnp

from ..importer import ModelSpec
from .common import KeyGen, adam_init, adam_update, dense_init, normal, one_hot

PRESETS = {
    "small": dict(batch=8, nodes=16, edges=32, node_feat=8, edge_feat=4, latent=32, out=4, steps=2),
    "large": dict(batch=16, nodes=256, edges=1024, node_feat=16, edge_feat=8, latent=128, out=4, steps=10),
}


def mlp_params(kg, sizes):
    p = {}
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        p[f"w{i + 1}"] = dense_init(kg, a, b)
        p[f"b{i + 1}"] = jnp.zeros((b,), jnp.float32)
    return p


def mlp(p, x):
    x = jax.nn.relu(x @ p["w1"] + p["b1"])
    return x @ p["w2"] + p["b2"]


def make(batch, nodes, edges, node_feat, edge_feat, latent, out, steps, seed=4):
    kg = KeyGen(seed)
    L = latent
    params = {
        "encoder": {"node": mlp_params(kg, [node_feat, L, L]), "edge": mlp_params(kg, [edge_feat, L, L])},
        "processor": [{"edge": mlp_params(kg, [3 * L, L, L]), "node": mlp_params(kg, [2 * L, L, L])}
                      for _ in range(steps)],
        "decoder": mlp_params(kg, [L, L, out]),
    }
    opt = adam_init(params, kg)
    graph = {
        "nodes": normal(kg, (batch, nodes, node_feat)),
        "edges": normal(kg, (batch, edges, edge_feat)),
        "senders": jax.random.randint(kg(), (batch, edges), 0, nodes, jnp.int32),
        "receivers": jax.random.randint(kg(), (batch, edges), 0, nodes, jnp.int32),
    }
    targets = normal(kg, (batch, nodes, out))

    def apply(params, g):
        send = one_hot(g["senders"], nodes)     # [B, E, N]
        recv = one_hot(g["receivers"], nodes)   # [B, E, N]
        v = mlp(params["encoder"]["node"], g["nodes"])
        e = mlp(params["encoder"]["edge"], g["edges"])
        for p in params["processor"]:
            vs = jnp.einsum("ben,bnl->bel", send, v)   # gather sender latents
            vr = jnp.einsum("ben,bnl->bel", recv, v)   # gather receiver latents
            e = e + mlp(p["edge"], jnp.concatenate([e, vs, vr], axis=-1))
            agg = jnp.einsum("ben,bel->bnl", recv, e)  # segment sum over receivers
            v = v + mlp(p["node"], jnp.concatenate([v, agg], axis=-1))
        return mlp(params["decoder"], v)

    def loss_fn(params, g, targets):
        return jnp.mean(jnp.square(apply(params, g) - targets))

    def step(params, opt, graph, targets):
        loss, grads = jax.value_and_grad(loss_fn)(params, graph, targets)
        params, opt = adam_update(params, opt, grads)
        return params, opt, loss

    return ModelSpec(step, (params, opt, graph, targets), ["params", "opt", "graph", "targets"],
                     ["params", "opt", "loss"],
                     f"GNS-like graph network training step (Adam): {batch} graphs x {nodes} nodes x {edges} "
                     f"edges, latent {latent}, {steps} message-passing steps")
