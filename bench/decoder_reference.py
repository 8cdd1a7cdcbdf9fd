"""The pure-torch reference of npukit.decoder (python/npukit/decoder.py): torch eager, fp32.

The layer as Hugging Face's Llama composes it in eager mode: RMSNorm (x · rsqrt(mean(x²) + eps)
· w), F.linear for every projection, half-style RoPE from cos/sin tables, the cache write by
index assignment, grouped-query attention by repeat_kv (expand + reshape), softmax in fp32,
SwiGLU as silu(gate) · up, residual adds as tensor adds. Torch has no int8 GEMM for this on
the CPU in eager mode, so the int8 weights are dequantized once, at load, to fp32
(scale[n] · w[n, k], exact in fp32) and every matmul is an fp32 F.linear: what torch eager
computes for an int8 checkpoint without a quantization backend, and what
bench/decoder_layer_vs_torch.py times.

mlp="torch_int8": the MLP's linears as torch's own int8 path in eager mode, dynamic
quantization (torch.ao.quantization.quantize_dynamic with per-channel weights: int8
weights, activations quantized per tensor at each call, quantized::linear_dynamic on the
quantized engine, onednn or fbgemm); a second torch baseline for the bench.

mlp="emulated" (tests only) quantizes each MLP activation per token exactly as
npukit does (s = max|a| / 127 in fp32, q = clamp(round-half-even(a / s), ±127)), sums
q · w exactly (float64 of integers) and scales as (float)acc · (s · w_scale[n]) in fp32, so
that the comparison with npukit is limited to fp32 rounding, not quantization error.
"""
import math

import torch
import torch.nn.functional as F


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def quantize_rows(a):
    """npukit's per_token_quant in fp32 (docs/ops/attention.md): q (as float) and s [T, 1]."""
    s = a.abs().amax(-1, keepdim=True) / 127
    q = torch.where(s > 0, torch.clamp(torch.round(a / s), -127, 127), torch.zeros_like(a))
    return q, s


class Linear:
    """y = a · Wᵀ in fp32 with W dequantized once; mlp="emulated": per-token int8 activations as
    npukit's; "torch_int8": torch's dynamic int8 linear. Float weights (scale None): fp32 always."""

    def __init__(self, w, scale=None, mlp="fp32"):
        if mlp not in ("fp32", "emulated", "torch_int8"):
            raise ValueError(f"mlp={mlp!r}: fp32, emulated or torch_int8")
        self.mode = mlp if scale is not None else "fp32"
        self.w = w.float() * scale[:, None] if scale is not None else w.float()
        if self.mode == "emulated":
            self.w8, self.scale = w.double(), scale
        elif self.mode == "torch_int8":
            lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
            lin.weight.data = self.w
            qconfig = {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
            self.qlinear = torch.ao.quantization.quantize_dynamic(torch.nn.Sequential(lin), qconfig)[0]
            del self.w

    def __call__(self, a):
        if self.mode == "fp32":
            return F.linear(a, self.w)
        if self.mode == "torch_int8":
            return self.qlinear(a)
        q, s = quantize_rows(a)
        acc = (q.double() @ self.w8.T).float()  # exact: integers below 2^53
        return acc * (s * self.scale[None, :])


class ReferenceLayer:
    def __init__(self, cfg, w, max_seq, mlp="fp32", cos=None, sin=None):
        self.cfg = cfg
        self.attn_norm, self.mlp_norm = w.attn_norm.float(), w.mlp_norm.float()
        self.qkv = Linear(w.w_qkv, w.w_qkv_scale, mlp)
        self.o = Linear(w.w_o, w.w_o_scale, mlp)
        F_ = cfg.ffn
        self.gate = Linear(w.w_gate_up[:F_], w.gate_up_scale[:F_], mlp)
        self.up = Linear(w.w_gate_up[F_:], w.gate_up_scale[F_:], mlp)
        self.down = Linear(w.w_down, w.down_scale, mlp)
        self.k_cache = torch.zeros(cfg.kv_heads, max_seq, cfg.head_dim)
        self.v_cache = torch.zeros(cfg.kv_heads, max_seq, cfg.head_dim)
        self.cos, self.sin = cos, sin

    def rope(self, x, pos):
        d = x.shape[-1]
        rotated = torch.cat((-x[..., d // 2:], x[..., : d // 2]), dim=-1)
        return x * self.cos[pos] + rotated * self.sin[pos]

    def attention(self, h, pos):
        c = self.cfg
        HQ, HKV, DH = c.heads, c.kv_heads, c.head_dim
        qkv = self.qkv(h)
        q, k, v = qkv.split([HQ * DH, HKV * DH, HKV * DH], dim=-1)
        q = self.rope(q.view(1, HQ, DH).transpose(0, 1), pos)
        k = self.rope(k.view(1, HKV, DH).transpose(0, 1), pos)
        v = v.view(1, HKV, DH).transpose(0, 1)
        self.k_cache[:, pos:pos + 1] = k
        self.v_cache[:, pos:pos + 1] = v
        L, G = pos + 1, HQ // HKV
        keys = self.k_cache[:, :L][:, None].expand(HKV, G, L, DH).reshape(HQ, L, DH)
        values = self.v_cache[:, :L][:, None].expand(HKV, G, L, DH).reshape(HQ, L, DH)
        p = torch.softmax(q @ keys.transpose(1, 2) / math.sqrt(DH), dim=-1)
        return self.o((p @ values).transpose(0, 1).reshape(1, HQ * DH))

    def __call__(self, x, pos):
        """x [1, hidden] → x + attn + mlp, as Hugging Face's LlamaDecoderLayer (new tensors)."""
        eps = self.cfg.eps
        x = x + self.attention(rms_norm(x, self.attn_norm, eps), pos)
        n = rms_norm(x, self.mlp_norm, eps)
        return x + self.down(F.silu(self.gate(n)) * self.up(n))


def rope_tables(cfg, max_seq):
    """cos and sin [max_seq, 1, head_dim] (half style), angles in fp64 as npukit forms them."""
    d = cfg.head_dim
    inv_freq = 1.0 / (cfg.theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = torch.arange(max_seq, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)[:, None, :]
    return emb.cos().float(), emb.sin().float()


class Reference:
    """The stack: layers, then the final norm. step(x, pos) -> (final norm, residual)."""

    def __init__(self, cfg, layer_weights, final_norm, max_seq, mlp="fp32"):
        if cfg.style != "half":
            raise ValueError("the reference implements style=half only")
        cos, sin = rope_tables(cfg, max_seq)
        self.cfg = cfg
        self.layers = [ReferenceLayer(cfg, w, max_seq, mlp, cos, sin) for w in layer_weights]
        self.final_norm = final_norm.float()

    def step(self, x, pos):
        for layer in self.layers:
            x = layer(x, pos)
        return rms_norm(x, self.final_norm, self.cfg.eps), x
