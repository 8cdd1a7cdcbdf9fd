"""A Llama-shaped decoder from torch.ops.npukit: decode steps of one or more layers.

    from npukit.decoder import Config, Decoder, random_weights
    cfg = Config(hidden=2048, heads=32, kv_heads=4, head_dim=64, ffn=5632)
    dec = Decoder(cfg, [random_weights(cfg, seed=i) for i in range(layers)], final_norm, max_seq=2048)
    for pos in range(steps):
        y = dec.step(x, pos)      # x [1, hidden] float32: the token's embedding, then its residual

Each layer, for one token (T = 1) at position pos:

    residual += attn(rms_norm(residual))                       qkv_attention_, add_rms_norm_
    residual += down(silu(gate(n)) * up(n)), n = rms_norm(residual)
                    per_token_quant -> int8_gemm (gate|up, one [2F, D] matrix) -> silu_mul
                    -> per_token_quant -> int8_gemm (down)

Every residual add is fused with the RMSNorm that follows it (add_rms_norm_, vLLM's
fused_add_rms_norm): the MLP's own norm, the next layer's input norm, and after the last
layer the final norm. Only the first layer's input norm is a plain rms_norm.

- Activations, residual and KV caches are float32. The attention projections are float16
  (default), float32 or int8 (`Int8Weights`): qkv_attention's `pos` is an op parameter, so
  each decode step makes a new prepared op; with int8 projections it starts from the one
  of an earlier pos and shares its packed matrices (npukit_op_create_like), so nothing is
  packed again (docs/torch.md, "A decoder layer", has the measured cost).
- The MLP's weights are int8, symmetric per output channel, packed once
  (torch.classes.npukit.Int8Weights), on activations quantized per token
  (per_token_quant: s = max|a| / 127), whose scales int8_gemm takes per row (`a_scales`):
  y = (float)acc · (s[m] · w_scale[n]), the product qkv_attention's int8 path forms
  (docs/ops/attention.md). The parameter set, and so the prepared op and its packed
  weights, stays the same at every step; no arithmetic runs in torch.
- Nothing falls back to torch: a libnpukit_torch.so without one of the ops below is an
  error naming it.
"""
from dataclasses import dataclass

import torch

from . import load_torch

__all__ = ["Config", "LayerWeights", "DecoderLayer", "Decoder", "random_weights", "required_ops"]

# The torch.ops.npukit ops a layer is made of.
_REQUIRED = ("rms_norm", "add_rms_norm_", "qkv_attention_", "per_token_quant", "int8_gemm", "silu_mul")


def required_ops():
    """torch.ops.npukit with every op the decoder uses; NotImplementedError naming those missing."""
    ops = load_torch()
    missing = [name for name in _REQUIRED if not hasattr(ops, name)]
    if missing:
        raise NotImplementedError(
            "npukit.decoder: torch.ops.npukit has no " + ", ".join(missing) + " (the decoder needs "
            + ", ".join(_REQUIRED) + "; each is a registered op of libnpukit.so, so a build that has "
            "them has them in torch too); the decoder does not compute them in torch")
    return ops


@dataclass(frozen=True)
class Config:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    eps: float = 1e-5
    theta: float = 10000.0
    style: str = "half"

    @property
    def qkv_rows(self):
        return (self.heads + 2 * self.kv_heads) * self.head_dim


@dataclass
class LayerWeights:
    """One layer's weights in nn.Linear's [out, in] layout.

    w_qkv: the q heads' rows, then k's, then v's; w_gate_up: the gate's ffn rows, then
    up's (a Llama checkpoint's gate_proj and up_proj stacked); int8 matrices are symmetric
    per output channel: real value = scale[n] · w[n, k]."""
    attn_norm: torch.Tensor      # [hidden] float32
    w_qkv: torch.Tensor          # [qkv_rows, hidden] float16 | float32 | int8
    w_o: torch.Tensor            # [hidden, heads·head_dim], as w_qkv
    mlp_norm: torch.Tensor       # [hidden] float32
    w_gate_up: torch.Tensor      # [2·ffn, hidden] int8
    gate_up_scale: torch.Tensor  # [2·ffn] float32
    w_down: torch.Tensor         # [hidden, ffn] int8
    down_scale: torch.Tensor     # [hidden] float32
    w_qkv_scale: torch.Tensor = None  # [qkv_rows] float32, iff w_qkv is int8
    w_o_scale: torch.Tensor = None    # [hidden] float32, iff w_o is int8


def _int8_channels(rows, cols, gen, scale):
    """Random int8 weights over the whole range and per-channel scales around `scale`."""
    w = torch.randint(-127, 128, (rows, cols), dtype=torch.int8, generator=gen)
    s = scale * (0.5 + torch.rand(rows, generator=gen))
    return w, s.float()


def random_weights(cfg, seed=0, attn_weights=torch.float16):
    """A layer of random weights at cfg's shapes, scaled so that activations stay O(1)."""
    gen = torch.Generator().manual_seed(seed)
    D, F = cfg.hidden, cfg.ffn
    uniform = lambda *shape, bound: (torch.rand(*shape, generator=gen) * 2 - 1) * bound  # noqa: E731
    norms = [1 + 0.1 * uniform(D, bound=1.0) for _ in range(2)]
    extra = {}
    if attn_weights == torch.int8:
        w_qkv, extra["w_qkv_scale"] = _int8_channels(cfg.qkv_rows, D, gen, 1.7 / (127 * D ** 0.5))
        w_o, extra["w_o_scale"] = _int8_channels(D, cfg.heads * cfg.head_dim, gen,
                                                 1.7 / (127 * (cfg.heads * cfg.head_dim) ** 0.5))
    else:
        w_qkv = uniform(cfg.qkv_rows, D, bound=1.7 / D ** 0.5).to(attn_weights)
        w_o = uniform(D, cfg.heads * cfg.head_dim, bound=1.7 / (cfg.heads * cfg.head_dim) ** 0.5).to(attn_weights)
    w_gate_up, gate_up_scale = _int8_channels(2 * F, D, gen, 1.7 / (127 * D ** 0.5))
    w_down, down_scale = _int8_channels(D, F, gen, 1.7 / (127 * F ** 0.5))
    return LayerWeights(norms[0], w_qkv, w_o, norms[1], w_gate_up, gate_up_scale, w_down, down_scale, **extra)


class DecoderLayer:
    """One layer's weights (the int8 ones packed here), its KV cache and its per-step calls."""

    def __init__(self, cfg, weights, max_seq, ops=None):
        self.ops = ops if ops is not None else required_ops()
        self.cfg, self.w = cfg, weights
        if weights.w_qkv.dtype != weights.w_o.dtype:
            raise ValueError(f"npukit.decoder: w_qkv is {weights.w_qkv.dtype}, w_o {weights.w_o.dtype}: they share one dtype")
        for name in ("w_gate_up", "w_down"):
            if getattr(weights, name).dtype != torch.int8:
                raise ValueError(f"npukit.decoder: {name} is {getattr(weights, name).dtype}; the MLP takes int8 weights")
        self.k_cache = torch.zeros(cfg.kv_heads, max_seq, cfg.head_dim)
        self.v_cache = torch.zeros(cfg.kv_heads, max_seq, cfg.head_dim)
        Int8Weights = torch.classes.npukit.Int8Weights
        self.gate_up = Int8Weights(weights.w_gate_up)
        self.down = Int8Weights(weights.w_down)
        ops = self.ops
        self._int8_attn = weights.w_qkv.dtype == torch.int8
        if self._int8_attn:
            self._w_qkv, self._w_o = Int8Weights(weights.w_qkv), Int8Weights(weights.w_o)
            self._attn = ops.qkv_attention_.packed
        else:
            self._w_qkv, self._w_o = weights.w_qkv, weights.w_o
            self._attn = ops.qkv_attention_.default
        # The overloads resolved once: a packet call tries each overload in turn (docs/torch.md).
        self._add_norm = ops.add_rms_norm_.default
        self._quant = ops.per_token_quant.default
        self._gemm = ops.int8_gemm.packed
        self._silu_mul = ops.silu_mul.default

    def attention(self, h, pos):
        c, w = self.cfg, self.w
        return self._attn(h, self._w_qkv, self._w_o, self.k_cache, self.v_cache, w.w_qkv_scale, w.w_o_scale, None,
                          pos, c.heads, c.kv_heads, c.head_dim, c.theta, c.style)

    def mlp(self, n):
        """down(silu(gate(n)) · up(n)) for n [1, hidden], both GEMMs int8 on per-token quantized n."""
        F = self.cfg.ffn
        q, s = self._quant(n)
        gate_up = self._gemm(q, self.gate_up, self.w.gate_up_scale, None, s, 0, 1.0, "float32")
        act = self._silu_mul(gate_up.view(1, 2, F))
        q, s = self._quant(act)
        return self._gemm(q, self.down, self.w.down_scale, None, s, 0, 1.0, "float32")

    def __call__(self, h, residual, pos):
        """h = the layer's normed input, residual its residual stream [1, hidden]; returns the MLP's
        output, which the caller adds to residual (fused with the next norm), as vLLM's layers do."""
        attn = self.attention(h, pos)
        n = self._add_norm(attn, residual, self.w.mlp_norm, self.cfg.eps)
        return self.mlp(n)


class Decoder:
    """A stack of DecoderLayers and the final norm: one token per step."""

    def __init__(self, cfg, layer_weights, final_norm, max_seq, ops=None):
        self.ops = ops if ops is not None else required_ops()
        self.cfg, self.max_seq = cfg, max_seq
        self.layers = [DecoderLayer(cfg, w, max_seq, self.ops) for w in layer_weights]
        self.final_norm = final_norm
        self._norm = self.ops.rms_norm.default
        self._add_norm = self.ops.add_rms_norm_.default

    def step(self, x, pos):
        """Decodes the token at `pos`: x [1, hidden] float32 is its embedding and becomes its residual
        stream, updated in place (it holds the last layer's output on return). Returns the final
        norm of that residual, [1, hidden]."""
        if x.dim() != 2 or x.shape[0] != 1 or x.dtype != torch.float32:
            raise ValueError(f"npukit.decoder: x is {tuple(x.shape)} {x.dtype}; a decode step takes [1, hidden] float32 "
                             "(one token per step)")
        if not 0 <= pos < self.max_seq:
            raise ValueError(f"npukit.decoder: pos={pos} outside the KV cache's [0, {self.max_seq})")
        eps, layers = self.cfg.eps, self.layers
        h = self._norm(x, layers[0].w.attn_norm, eps)
        for i, layer in enumerate(layers):
            out = layer(h, x, pos)
            nxt = layers[i + 1].w.attn_norm if i + 1 < len(layers) else self.final_norm
            h = self._add_norm(out, x, nxt, eps)
        return h
