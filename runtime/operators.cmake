# The operators the kit ships, one block each: npukit_operator(<op>), which finds the op's
# files by name (cmake/NpukitOperators.cmake), then the ahead-of-time kernels its registry
# entry dispatches over: npukit_add_kernel, one library per CPU tier (cmake/NpukitKernels.cmake)
# and one per GPU API (cmake/NpukitGpuKernels.cmake). The order of the blocks is the
# registry's order.
# Kernels another op shares are declared with the op that owns them. The first CPU kernel
# declared (rms_norm_f32) owns the Halide runtime every kernel shares.

npukit_operator(rms_norm)
foreach (t f32 f16)
  string(REPLACE "f" "float" ty ${t})
  npukit_add_kernel(rms_norm_${t} GENERATOR npukit_rms_norm PARAMS x.type=${ty} weight.type=${ty} y.type=${ty})
endforeach ()

npukit_operator(rope)
foreach (t f32 f16)
  string(REPLACE "f" "float" ty ${t})
  npukit_add_kernel(rope_half_rows_${t} GENERATOR npukit_rope_half_rows PARAMS x.type=${ty} y.type=${ty})
  foreach (style interleaved half)
    npukit_add_kernel(rope_${style}_${t} GENERATOR npukit_rope PARAMS style=${style} x.type=${ty} y.type=${ty})
  endforeach ()
endforeach ()

# INT8 GEMM: the accumulation (decode and prefill schedules; qkv_attention's int8 path uses
# them too) and its epilogues. Prefill only has the AMX tier: one row fills 1/16 of a tile,
# and decode reads its weights at the memory's speed on the VNNI tier already
# (runtime/int8_gemm.cpp, amx_pays_off).
npukit_operator(int8_gemm)
foreach (shape decode prefill)
  set(_tiers avx512_vnni avx2 sse41)
  if (shape STREQUAL "prefill")
    list(PREPEND _tiers avx512_amx)
  endif ()
  npukit_add_kernel(int8_gemm_acc_${shape} GENERATOR npukit_int8_gemm_acc TIERS ${_tiers} PARAMS shape=${shape})
endforeach ()
# The AMX prefill kernel that stores its tiles straight into acc: zero point 0, N a
# multiple of 32 and M >= 16 only (runtime/int8_gemm.cpp picks it).
npukit_add_cpu_kernel(int8_gemm_acc_prefill_direct GENERATOR npukit_int8_gemm_acc TIERS avx512_amx
                      PARAMS shape=prefill direct=true)
foreach (epilogue "f32;scale;float32" "f16;scale;float16" "fixed_point;fixed_point;int8" "float;float;int8")
  list(GET epilogue 0 name)
  list(GET epilogue 1 mode)
  list(GET epilogue 2 ty)
  npukit_add_kernel(int8_epilogue_${name} GENERATOR npukit_int8_epilogue PARAMS mode=${mode} y.type=${ty})
endforeach ()

# The split (decode) kernels in pairs: with a mask, and `_unmasked` for calls without one
# (which never reads its mask argument); a CPU runs them for every token, a GPU for T = 1.
# The general kernels (GPU only) for T > 1 on a GPU. Per q/o and k/v type: the attention
# op's fp32 and fp16, and qkv_attention's core, fp32 q and o over an fp16 cache
# (`_f32_kv_f16`; over an fp32 cache it runs the fp32 kernels).
npukit_operator(attention)
foreach (types "f32;float32;float32" "f16;float16;float16" "f32_kv_f16;float32;float16")
  list(GET types 0 t)
  list(GET types 1 qo)
  list(GET types 2 kv)
  npukit_add_gpu_kernel(attention_${t} GENERATOR npukit_attention
                        PARAMS q.type=${qo} k.type=${kv} v.type=${kv} o.type=${qo})
  foreach (m "" _unmasked)
    if (m)
      set(masked masked=false)
    else ()
      set(masked masked=true)
    endif ()
    npukit_add_kernel(attention_decode_${t}${m} GENERATOR npukit_attention_decode
                      PARAMS q.type=${qo} k.type=${kv} v.type=${kv} o.type=${qo} ${masked})
  endforeach ()
endforeach ()

# The fused qkv_attention op: the QKV projection with RoPE and the cache write, per
# activation/cache type (x and the caches share it) and weight type; the attention core
# (the attention block's kernels); the output projection from fp32 o per weight type and
# output type. Its int8-weight path: per_token_quant's quantize_rows of x and of the fp32 o,
# the QKV step from int8_gemm's int32 accumulators, and the output projection's
# dequantization into y.
npukit_operator(qkv_attention)
foreach (a f32 f16)
  string(REPLACE "f" "float" aty ${a})
  foreach (w f32 f16)
    string(REPLACE "f" "float" wty ${w})
    npukit_add_kernel(qkv_rope_${a}_w${w} GENERATOR npukit_qkv_rope
                      PARAMS x.type=${aty} w.type=${wty} k_new.type=${aty} v_new.type=${aty})
    npukit_add_kernel(linear_f32_w${w}_${a} GENERATOR npukit_linear
                      PARAMS x.type=float32 w.type=${wty} y.type=${aty})
  endforeach ()
  npukit_add_kernel(qkv_rope_dequant_${a} GENERATOR npukit_qkv_rope_dequant
                    PARAMS k_new.type=${aty} v_new.type=${aty})
  npukit_add_kernel(dequantize_rows_${a} GENERATOR npukit_dequantize_rows PARAMS y.type=${aty})
endforeach ()

npukit_operator(per_token_quant)
foreach (a f32 f16)
  string(REPLACE "f" "float" aty ${a})
  npukit_add_kernel(quantize_rows_${a} GENERATOR npukit_quantize_rows PARAMS a.type=${aty})
endforeach ()

npukit_operator(silu_mul)
foreach (t f32 f16)
  string(REPLACE "f" "float" ty ${t})
  npukit_add_kernel(silu_mul_${t} GENERATOR npukit_silu_mul PARAMS gate_up.type=${ty} y.type=${ty})
endforeach ()

npukit_operator(add_rms_norm)
foreach (t f32 f16)
  string(REPLACE "f" "float" ty ${t})
  set(_types x.type=${ty} residual.type=${ty} weight.type=${ty} y.type=${ty} residual_out.type=${ty})
  npukit_add_kernel(add_rms_norm_${t} GENERATOR npukit_add_rms_norm PARAMS ${_types})
endforeach ()

# INT4-weight GEMM: one kernel per activation type (int8, whose groups sum exactly in
# integers, or fp32 / fp16) and output type.
npukit_operator(int4_gemm)
foreach (a i8 f32 f16)
  if (a STREQUAL "i8")
    set(aty int8)
  else ()
    string(REPLACE "f" "float" aty ${a})
  endif ()
  foreach (y f32 f16)
    string(REPLACE "f" "float" yty ${y})
    set(_tiers avx512 avx2 sse41)
    if (a STREQUAL "i8")
      list(PREPEND _tiers avx512_vnni)
    endif ()
    # The CPU's float kernels read the packed bytes as int32 words (ops/int4_gemm.h).
    set(_params a.type=${aty} y.type=${yty})
    if (a STREQUAL "i8")
      npukit_add_kernel(int4_gemm_${a}_${y} GENERATOR npukit_int4_gemm TIERS ${_tiers} PARAMS ${_params} w.type=uint8)
    else ()
      npukit_add_cpu_kernel(int4_gemm_${a}_${y} GENERATOR npukit_int4_gemm TIERS ${_tiers}
                            PARAMS ${_params} w.type=int32)
      npukit_add_gpu_kernel(int4_gemm_${a}_${y} GENERATOR npukit_int4_gemm PARAMS ${_params} w.type=uint8)
    endif ()
  endforeach ()
endforeach ()
