#!/usr/bin/env python3
"""Training steps of published JAX models, as their PyPI packages ship them, lowered by JAX
(`jax.jit(step, keep_unused=True).lower(*args)`) to StableHLO in generic form, as MLIR 22 reads it:
nested jits stay private functions called from @main (nothing inlined, JAX's lowering unpatched),
ops keep JAX's name-stack locations and @main's block arguments the pytree paths JAX gives them
(`loc("params['transformer']['h']['0']['attn']['c_attn']['kernel']")`); @main's arguments and
results also carry `partir.name` = the pytree path joined by `/`
(`params/transformer/h/0/attn/c_attn/kernel`, `opt/0/mu/...`, `tokens`, `targets`, `loss`).

Each step: next-token cross-entropy (`optax.softmax_cross_entropy_with_integer_labels`), its
gradient, an `optax.adamw` update; returns (new params, new optimizer state, loss). Random
init from a config object (no weights are downloaded), tiny configs: 2 layers, width 64, 4 heads,
vocabulary 256, sequence 16, batch 8, all f32 (tokens i32).

| model | package | variants |
| --- | --- | --- |
| `gpt2` | transformers 4.x `FlaxGPT2LMHeadModel` (fused `c_attn` QKV, `FlaxConv1D` kernels stored [out, in], tied embeddings) | as written; `-scan` and `-remat`: the library has neither option, so the library's `FlaxGPT2Block` is wrapped by flax `nn.scan` / `nn.remat` inside the library's own module classes |
| `llama` | transformers 4.x `FlaxLlamaForCausalLM` (RoPE, RMSNorm, SwiGLU, grouped-query attention: 4 query heads, 2 KV heads) | same as gpt2 (`FlaxLlamaDecoderLayer` under `nn.scan` / `nn.remat`) |
| `gpt_neox` | penzai `build_gpt_neox_transformer` (parallel attention + MLP residual, partial RoPE, named axes) | as written; `-scan`: the library's own `use_layer_stack=True` (`pz.nn.LayerStack`); `-remat`: the library's own `penzai.toolshed.gradient_checkpointing.Checkpointed` on every `TransformerBlock` |

    tools/.venv/bin/python tools/published_models.py                 # writes examples/published/*.mlir
    tools/.venv/bin/python tools/published_models.py --check         # compares instead (exit 1 on a difference)
    tools/.venv/bin/python tools/published_models.py gpt2 llama-scan --out DIR --stats
    tools/.venv/bin/python tools/published_models.py gpt2 --layers 6 --plain --out DIR   # 6 layers, no locations

A file over 1.5 MB would go to examples/generated/ (gitignored) instead; none is near that.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

from partir_jax import importer  # noqa: E402

REPO = TOOLS.parent
OUT_DIR = REPO / "examples" / "published"
GENERATED_DIR = REPO / "examples" / "generated"
MAX_BYTES = 1_500_000
MLIR_OPT_22 = importer.MLIR_OPT_22

BATCH, SEQ, VOCAB, WIDTH, HEADS, LAYERS = 8, 16, 256, 64, 4, 2
ARG_NAMES = ["params", "opt", "tokens", "targets"]
RESULT_NAMES = ["params", "opt", "loss"]


@dataclass
class Published:
    name: str          # file stem: gpt2, gpt2-scan, ...
    fn: object         # step(params, opt, tokens, targets) -> (params, opt, loss)
    args: tuple
    what: str


def _tokens():
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    seq = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1), dtype=np.int32)
    return jnp.asarray(seq[:, :-1]), jnp.asarray(seq[:, 1:])  # tokens, next tokens


def _training_step(logits_fn):
    """The step a user writes: next-token cross-entropy, its gradient, an AdamW update."""
    import jax
    import optax

    tx = optax.adamw(1e-3)

    def step(params, opt_state, tokens, targets):
        def loss_fn(p):
            logits = logits_fn(p, tokens)
            return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean()

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step, tx


# ---------------------------------------------------------------------------------------------
# transformers (Flax): GPT-2 and LLaMA. The library offers no scan and, for these two models, no
# gradient checkpointing flag (4.57: only BERT-like, T5 and Whisper take `gradient_checkpointing`),
# so the variants wrap the library's own block class with flax's `nn.scan` / `nn.remat` in a
# subclass of the library's block collection, and give the library's module classes that
# collection. The library's `__call__`s (embeddings, attention, MLP, LM head) run unchanged.


def _collection(base, block_cls, variant: str, llama: bool):
    """A subclass of the library's block collection `base` whose layers are `block_cls` under
    `nn.remat` (one per layer, named "0", "1", ... as the library names them) or `nn.scan` (one
    stacked layer named "blocks", parameters with a leading layer dim)."""
    import flax.linen as nn

    class Narrow(block_cls):
        # arrays only, so that nn.remat needs no static arguments and nn.scan broadcasts them
        def __call__(self, hidden_states, attention_mask, position_ids=None):
            if llama:
                return super().__call__(hidden_states, attention_mask, position_ids)[0]
            return super().__call__(hidden_states, attention_mask)[0]

    class ScanStep(Narrow):
        def __call__(self, carry, attention_mask, position_ids=None):
            return super().__call__(carry, attention_mask, position_ids), None

    class Collection(base):
        def setup(self):
            if variant in ("scan", "scan-remat"):
                # scan-remat: MaxText's default, each scanned layer rematerialised in the backward scan
                step = nn.remat(ScanStep, prevent_cse=False) if variant == "scan-remat" else ScanStep
                self.blocks = nn.scan(step, variable_axes={"params": 0}, split_rngs={"params": True},
                                      in_axes=nn.broadcast, length=self.config.num_hidden_layers)(
                    self.config, dtype=self.dtype)
            else:
                self.blocks = [nn.remat(Narrow)(self.config, dtype=self.dtype, name=str(i))
                               for i in range(self.config.num_hidden_layers)]

        def __call__(self, hidden_states, attention_mask=None, *rest, position_ids=None, **_):
            if variant in ("scan", "scan-remat"):
                hidden_states, _ = self.blocks(hidden_states, attention_mask, position_ids)
            else:
                for block in self.blocks:
                    hidden_states = block(hidden_states, attention_mask, position_ids)
            return (hidden_states, None, None) if llama else (hidden_states, None, None, None)

    Collection.__name__ = f"{base.__name__}_{variant}"
    return Collection


def _gpt2_model(config, variant: str):
    from transformers import FlaxGPT2LMHeadModel
    from transformers.models.gpt2 import modeling_flax_gpt2 as lib

    if not variant:
        return FlaxGPT2LMHeadModel(config, input_shape=(BATCH, SEQ), seed=0)
    import flax.linen as nn
    import jax

    Collection = _collection(lib.FlaxGPT2BlockCollection, lib.FlaxGPT2Block, variant, llama=False)

    class Module(lib.FlaxGPT2Module):
        def setup(self):  # the library's setup, with the variant's block collection
            self.embed_dim = self.config.hidden_size
            init = jax.nn.initializers.normal(stddev=self.config.initializer_range)
            self.wte = nn.Embed(self.config.vocab_size, self.embed_dim, embedding_init=init, dtype=self.dtype)
            self.wpe = nn.Embed(self.config.max_position_embeddings, self.embed_dim, embedding_init=init,
                                dtype=self.dtype)
            self.dropout = nn.Dropout(rate=self.config.embd_pdrop)
            self.h = Collection(self.config, dtype=self.dtype)
            self.ln_f = nn.LayerNorm(epsilon=self.config.layer_norm_epsilon, dtype=self.dtype)

    class LMHead(lib.FlaxGPT2LMHeadModule):
        def setup(self):
            self.transformer = Module(self.config, dtype=self.dtype)
            self.lm_head = nn.Dense(self.config.vocab_size, use_bias=False, dtype=self.dtype,
                                    kernel_init=jax.nn.initializers.normal(stddev=self.config.initializer_range))

    class Model(FlaxGPT2LMHeadModel):
        module_class = LMHead

    return Model(config, input_shape=(BATCH, SEQ), seed=0)


def _llama_model(config, variant: str, shape=(BATCH, SEQ), init: bool = True, dtype=None):
    """`init=False`: no weights are made (`_do_init`), for abstract arguments. `dtype`: the
    computation's (flax's `dtype`; the parameters stay f32, flax's `param_dtype`)."""
    import jax.numpy as jnp

    dtype = dtype or jnp.float32
    from transformers import FlaxLlamaForCausalLM
    from transformers.models.llama import modeling_flax_llama as lib

    if not variant:
        return FlaxLlamaForCausalLM(config, input_shape=shape, seed=0, _do_init=init, dtype=dtype)
    import flax.linen as nn
    import jax

    Collection = _collection(lib.FlaxLlamaLayerCollection, lib.FlaxLlamaDecoderLayer, variant, llama=True)

    class Module(lib.FlaxLlamaModule):
        def setup(self):  # the library's setup, with the variant's layer collection
            self.hidden_size = self.config.hidden_size
            init = jax.nn.initializers.normal(stddev=self.config.initializer_range)
            self.embed_tokens = nn.Embed(self.config.vocab_size, self.hidden_size, embedding_init=init,
                                         dtype=self.dtype)
            self.layers = Collection(self.config, dtype=self.dtype)
            self.norm = lib.FlaxLlamaRMSNorm(self.config, dtype=self.dtype)

    class LMHead(lib.FlaxLlamaForCausalLMModule):
        def setup(self):
            self.model = Module(self.config, dtype=self.dtype)
            self.lm_head = nn.Dense(self.config.vocab_size, use_bias=False, dtype=self.dtype,
                                    kernel_init=jax.nn.initializers.normal(self.config.initializer_range))

    class Model(FlaxLlamaForCausalLM):
        module_class = LMHead

    return Model(config, input_shape=shape, seed=0, _do_init=init, dtype=dtype)


def _transformers_step(model):
    """`model(tokens, params=p, train=False).logits`, the call of transformers' Flax examples
    (dropout is off in the configs, so train=False computes the same)."""
    step, tx = _training_step(lambda p, tokens: model(tokens, params=p, train=False).logits)
    params = model.params
    return step, (params, tx.init(params))


def gpt2(variant: str = "") -> Published:
    from transformers import GPT2Config

    config = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=WIDTH, n_layer=LAYERS, n_head=HEADS,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    step, (params, opt) = _transformers_step(_gpt2_model(config, variant))
    return Published("gpt2", step, (params, opt, *_tokens()), "transformers FlaxGPT2LMHeadModel")


def llama(variant: str = "") -> Published:
    from transformers import LlamaConfig

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=WIDTH, intermediate_size=2 * WIDTH,
                         num_hidden_layers=LAYERS, num_attention_heads=HEADS, num_key_value_heads=HEADS // 2,
                         # >= 2 x head dim: the library's RoPE table is cut to this many entries on
                         # its last dim (`out[:, :, :num_pos]` in create_sinusoidal_positions)
                         max_position_embeddings=max(SEQ, 2 * (WIDTH // HEADS)), tie_word_embeddings=False)
    step, (params, opt) = _transformers_step(_llama_model(config, variant))
    return Published("llama", step, (params, opt, *_tokens()), "transformers FlaxLlamaForCausalLM")


def llama_8b(variant: str = "") -> Published:
    """transformers' FlaxLlama with LLaMA-3 8B's shapes (vocab 128256, width 4096, MLP 14336,
    32 query and 8 KV heads), a batch of 64 x 2048 tokens, on abstract arguments
    (`jax.ShapeDtypeStruct`s: nothing is materialised, nothing can run). For pricing and
    partitioning at the size people train: as written with `LAYERS_8B` layers (the
    vocab-parallel test's step), or scanned over all 32 (`variant="scan"`, 8.03 B parameters; and
    `"scan-remat"`, each scanned layer under `nn.remat`, as MaxText trains by default; a
    `-bf16` suffix computes in bfloat16 on f32 master weights, as MaxText's default
    `dtype=bfloat16`, `weight_dtype=float32`)."""
    from transformers import LlamaConfig

    batch, seq = 64, 2048
    layers = 32 if variant else LAYERS_8B
    config = LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                         num_hidden_layers=layers, num_attention_heads=32, num_key_value_heads=8,
                         max_position_embeddings=seq, rope_theta=500000.0, tie_word_embeddings=False)
    name = "llama-8b" + (f"-{variant}" if variant else "")
    return _abstract_llama(config, variant, (batch, seq), name, "transformers FlaxLlamaForCausalLM, 8B shapes")


def _abstract_llama(config, variant: str, shape: tuple, name: str, what: str) -> Published:
    """transformers' FlaxLlama with `config`'s shapes, its step on abstract arguments (nothing
    is materialised) of a batch of `shape` tokens. A `-bf16` suffix of `variant`: bfloat16
    compute on f32 parameters and optimizer state, the logits cast to f32 for the loss
    (MaxText: `dtype=bfloat16`, `weight_dtype=float32`, f32 cross-entropy)."""
    import jax
    import jax.numpy as jnp

    variant, bf16 = (variant[: -len("-bf16")], True) if variant.endswith("-bf16") else (variant, False)
    dtype = jnp.bfloat16 if bf16 else jnp.float32
    model = _llama_model(config, variant, shape=shape, init=False, dtype=dtype)
    params = jax.eval_shape(lambda: model.init_weights(jax.random.key(0), shape))
    step, tx = _training_step(
        lambda p, tokens: model(tokens, params=p, train=False).logits.astype(jnp.float32))
    opt = jax.eval_shape(tx.init, params)
    tokens = jax.ShapeDtypeStruct(shape, jnp.int32)
    return Published(name, step, (params, opt, tokens, tokens), what + (", bf16 compute" if bf16 else ""))


def llama_70b(variant: str = "scan", layers: int = 80) -> Published:
    """transformers' FlaxLlama with LLaMA-3 70B's shapes (vocab 128256, width 8192, MLP 28672,
    64 query and 8 KV heads, 80 layers, 70.6 B parameters), scanned over its layers (`"scan"`) or
    scanned and rematerialised (`"scan-remat"`, MaxText's default; `-bf16`: bfloat16 compute on
    f32 master weights), or as written (`""`: `layers` layers unrolled, `layers/<i>` in the
    argument paths; partir's own cost per layer, `benches/scale`), a batch of 1024 x 2048 tokens
    (one sequence per device on 1024 devices), on abstract arguments."""
    from transformers import LlamaConfig

    batch, seq = 1024, 2048
    config = LlamaConfig(vocab_size=128256, hidden_size=8192, intermediate_size=28672,
                         num_hidden_layers=layers, num_attention_heads=64, num_key_value_heads=8,
                         max_position_embeddings=seq, rope_theta=500000.0, tie_word_embeddings=False)
    name = f"llama-70b-{variant}" if variant else ("llama-70b" if layers == 80 else f"llama-70b-{layers}layers")
    return _abstract_llama(config, variant, (batch, seq), name, "transformers FlaxLlamaForCausalLM, 70B shapes")


def mixtral_8x7b() -> Published:
    """The zoo's GShard MoE step (`partir_jax/models/moe.py`) with Mixtral 8x7B's shapes (width
    4096, 32 query and 8 KV heads, 8 experts of SwiGLU 14336, top-2 routing, vocabulary 32000),
    `LAYERS_8B` of its 32 layers, capacity factor 1.25, a batch of 64 x 2048 tokens, on abstract
    arguments. Adam as the zoo's (its state is `opt/m`, `opt/v`, `opt/count`)."""
    from partir_jax import models

    spec, _ = models.spec("moe", batch=64, seq=2048, width=4096, heads=32, kv_heads=8, ffn=14336,
                          vocab=32000, layers=LAYERS_8B, experts=8, top=2, capacity_factor=1.25,
                          abstract=True)
    return Published("mixtral-8x7b", spec.fn, spec.args, "GShard MoE step, Mixtral 8x7B shapes")


# ---------------------------------------------------------------------------------------------
# penzai: GPT-NeoX. Parameters are penzai `Parameter`s with labels ("transformer/block_0/mlp/in/
# Linear.weights") holding named arrays; the step takes them as a dict label -> positional array
# (axes in the parameter's own order) and binds them back into the model, as penzai's
# basic_training does with `pz.bind_variables`.


def gpt_neox(variant: str = "") -> Published:
    import jax
    import jax.numpy as jnp
    from penzai import pz
    from penzai.models.transformer import model_parts
    from penzai.models.transformer.variants import gpt_neox as lib
    from penzai.toolshed import gradient_checkpointing

    config = lib.GPTNeoXTransformerConfig(
        num_attention_heads=HEADS, embedding_dim=WIDTH, projection_dim=WIDTH // HEADS, mlp_hidden_dim=4 * WIDTH,
        num_decoder_blocks=LAYERS, vocab_size=VOCAB, activation_fn="gelu_exact", rope_subset_size=WIDTH // HEADS // 4,
        rope_wavelength=10_000.0, layernorm_epsilon=1e-5, parameter_dtype=jnp.float32,
        activation_dtype=jnp.float32, use_layer_stack=variant == "scan")
    model = lib.build_gpt_neox_transformer(config, init_base_rng=jax.random.key(0))
    if variant == "remat":
        model = (pz.select(model).at_instances_of(model_parts.TransformerBlock)
                 .apply(gradient_checkpointing.Checkpointed))
    unbound, frozen = pz.unbind_params(model, freeze=True)
    axes = {p.label: tuple(p.value.named_shape) for p in frozen}
    params = {p.label: p.value.unwrap(*axes[p.label]) for p in frozen}

    def logits_fn(p, tokens):
        bound = pz.bind_variables(unbound, [pz.ParameterValue(label=k, value=pz.nx.wrap(v).tag(*axes[k]))
                                            for k, v in p.items()])
        return bound(pz.nx.wrap(tokens).tag("batch", "seq")).unwrap("batch", "seq", "vocabulary")

    step, tx = _training_step(logits_fn)
    return Published("gpt_neox", step, (params, tx.init(params), *_tokens()), "penzai build_gpt_neox_transformer")


MODELS = {"gpt2": gpt2, "llama": llama, "gpt_neox": gpt_neox}
VARIANTS = ["", "scan", "remat"]
ALL = [m + (f"-{v}" if v else "") for m in MODELS for v in VARIANTS]
# Abstract cases, built on request only (not in ALL: too big to commit, nothing to run).
ABSTRACT = {"llama-8b": llama_8b, "llama-8b-scan": lambda: llama_8b("scan"),
            "llama-8b-scan-remat": lambda: llama_8b("scan-remat"), "mixtral-8x7b": lambda: mixtral_8x7b(),
            "llama-8b-scan-remat-bf16": lambda: llama_8b("scan-remat-bf16"),
            "llama-70b-scan": lambda: llama_70b("scan"), "llama-70b-scan-remat": lambda: llama_70b("scan-remat"),
            "llama-70b-scan-remat-bf16": lambda: llama_70b("scan-remat-bf16"),
            "llama-70b": lambda: llama_70b(""), "llama-70b-8layers": lambda: llama_70b("", layers=8)}
LAYERS_8B = 2


def build(case: str) -> Published:
    if case in ABSTRACT:
        return ABSTRACT[case]()
    model, _, variant = case.partition("-")
    # scan-remat (MaxText's default: each scanned layer rematerialised) for the transformers
    # models, built on request (tests/published.rs runs it; not a committed fixture)
    extra = ["scan-remat"] if model in ("gpt2", "llama") else []
    if model not in MODELS or variant not in VARIANTS + extra:
        raise SystemExit(f"unknown case {case!r}; known: {', '.join(ALL)}")
    published = MODELS[model](variant)
    published.name = case
    return published


def warm(published: Published, steps: int = 3) -> Published:
    """The same step with its arguments after `steps` training steps (jax.jit on this machine):
    Adam's first step is ill-conditioned (m / sqrt(v) = g / |g|), so comparisons of partitioned
    runs use a warm optimizer state, as the zoo's data does. The lowered program is the same."""
    import jax

    params, opt, tokens, targets = published.args
    step = jax.jit(published.fn)
    for _ in range(steps):
        params, opt, _ = step(params, opt, tokens, targets)
    return Published(published.name, published.fn, (params, opt, tokens, targets), published.what)


# ---------------------------------------------------------------------------------------------


def lower(published: Published) -> str:
    """The step as JAX lowers it, named, in MLIR 22's generic form with locations."""
    import jax
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    spec = importer.ModelSpec(published.fn, published.args, ARG_NAMES, RESULT_NAMES)
    in_names = importer.named_flat(spec.args, spec.arg_names)
    outs = jax.eval_shape(spec.fn, *spec.args)
    out_names = importer.named_flat(outs, spec.result_names)
    # `generic=False`: nested jits stay calls (generic=True would inline them); `locations`:
    # name-stack locations only (no source positions) and the block arguments' pytree paths.
    text = importer._stablehlo_with_names(spec, in_names, out_names, generic=False, locations=True)
    # jaxlib prints the dialects it knows in their custom form; reparse it and print it generic,
    # which a stock MLIR 22 reads with --allow-unregistered-dialect.
    with mlir.make_ir_context() as context:
        module = ir.Module.parse(text, context)
        generic = module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    return importer.run([MLIR_OPT_22, "--allow-unregistered-dialect", "--mlir-print-op-generic",
                         "--mlir-print-debuginfo", "-"], stdin=generic)


def stats(text: str) -> dict:
    """Op counts: @main's top-level ops, all ops of the module, private functions and calls."""
    top, nested = importer.count_main_ops(text)
    hist = importer.op_histogram(text)
    private = len(re.findall(r'"func.func"\(\)[^\n]*sym_visibility = "private"', text))
    callees = sorted(set(re.findall(r'"func.call"\([^\n]*callee = @([\w.$-]+)', text)))
    return {"main_top_level_ops": top, "main_ops_with_bodies": nested, "module_ops": sum(hist.values()),
            "func.call": hist.get("func.call", 0), "private func.func": private, "callees": callees,
            "stablehlo.while": hist.get("stablehlo.while", 0), "bytes": len(text.encode())}


def destination(case: str, out: Path | None, size: int) -> Path:
    if out is not None:
        return out / f"{case}.mlir"
    return (OUT_DIR if size <= MAX_BYTES else GENERATED_DIR) / f"{case}.mlir"


def main(argv=None) -> int:
    global LAYERS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*",
                        help=f"default: all ({', '.join(ALL)}); also {', '.join(ABSTRACT)} (abstract)")
    parser.add_argument("--out", type=Path, help="write here instead of examples/published/")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    parser.add_argument("--stats", action="store_true", help="print op counts, private functions and calls")
    parser.add_argument("--layers", type=int, default=LAYERS,
                        help=f"layers of the committed models (default {LAYERS}; more for folded pricing's tests)")
    parser.add_argument("--plain", action="store_true",
                        help="without locations (re-printed by mlir-opt, which drops them), as a tool that keeps none writes it")
    args = parser.parse_args(argv)
    LAYERS = args.layers
    failed = 0
    for case in args.cases or ALL:
        text = lower(build(case))
        if args.plain:
            text = importer.run([MLIR_OPT_22, "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"],
                                stdin=text)
        path = destination(case, args.out, len(text.encode()))
        if args.check:
            same = path.exists() and path.read_text() == text
            print(f"{case}: {'same' if same else 'DIFFERS'} ({path.relative_to(REPO) if path.is_relative_to(REPO) else path})")
            failed += not same
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"{case}: {path} ({len(text.encode()):,} B)")
        if args.stats:
            s = stats(text)
            print("  " + ", ".join(f"{k} {v}" for k, v in s.items() if k != "callees"))
            print("  callees: " + " ".join(s["callees"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
