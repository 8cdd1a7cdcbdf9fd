#include "golden/attention.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "golden/case_builder.h"
#include "golden/half.h"
#include "golden/rope.h"

namespace npukit::golden {
namespace {

constexpr RopeStyle kInterleaved = RopeStyle::interleaved;
constexpr RopeStyle kHalf = RopeStyle::half;
// Garbage in cache rows a kernel must not read: far from N(0, 1), finite in fp16.
constexpr double kGarbageLo = 1e3, kGarbageHi = 3e4;

std::string range_text(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

// What both generators share beyond CaseBuilder: the causal mask and the garbage in cache
// rows that must not be read.
class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // mask[t_lo..t_hi), j_lo..j_hi)] = −Inf; the mask (all 0) is created on first use.
  void mask_block(int64_t t_lo, int64_t t_hi, int64_t j_lo, int64_t j_hi) {
    Case& c = last();
    const int64_t T = c.dims.at("T"), S = c.dims.at("S_max");
    if (!c.inputs.count("mask")) c.inputs["mask"] = make_constant(DType::float32, {T, S}, 0);
    Array& m = c.inputs["mask"];
    for (int64_t t = t_lo; t < std::min(t_hi, T); ++t) {
      for (int64_t j = j_lo; j < std::min(j_hi, S); ++j) m.values[static_cast<size_t>(t * S + j)] = -kInf;
    }
  }

 protected:
  // Garbage in the cache rows [lo, S_max) of both caches.
  void garbage_from(int64_t lo) {
    for (const char* name : {"k_cache", "v_cache"}) signed_uniform(name, kGarbageLo, kGarbageHi, {1, lo, kAll});
  }
};

// --- the attention op ---

class CoreBuilder : public Builder {
 public:
  using Builder::Builder;

  // q, k, v ~ N(0, 1), garbage past the largest position.
  void add(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
           std::vector<int64_t> positions, const std::string& pos_text) {
    Case& c = CaseBuilder::add(
        sizes_text({{"t", T}, {"hq", Hq}, {"hkv", Hkv}, {"dh", Dh}, {"s", S_max}}) + " pos=" + pos_text,
        {{"T", T}, {"Hq", Hq}, {"Hkv", Hkv}, {"Dh", Dh}, {"S_max", S_max}});
    c.inputs["q"] = normal("q", {T, Hq, Dh}, 0, 1);
    c.inputs["k_cache"] = normal("k_cache", {Hkv, S_max, Dh}, 0, 1);
    c.inputs["v_cache"] = normal("v_cache", {Hkv, S_max, Dh}, 0, 1);
    Array& p = c.inputs["positions"] = make_constant(DType::int32, {T}, 0);
    for (size_t k = 0; k < positions.size(); ++k) p.values.at(k) = static_cast<double>(positions[k]);
    garbage_from(*std::max_element(positions.begin(), positions.end()) + 1);
  }

  // Positions first, first + 1, ..., first + T − 1.
  void add_run(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max, int64_t first) {
    std::vector<int64_t> p(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) p[static_cast<size_t>(t)] = first + t;
    add(T, Hq, Hkv, Dh, S_max, p, range_text(first, first + T - 1));
  }

  void add_list(int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
                std::initializer_list<int64_t> positions) {
    std::string text;
    for (int64_t p : positions) text += (text.empty() ? "" : ",") + std::to_string(p);
    add(static_cast<int64_t>(positions.size()), Hq, Hkv, Dh, S_max, positions, text);
  }

  // Positions uniform in [0, S_max), drawn independently (repeats allowed).
  void add_random(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max) {
    // Drawn for the case about to be added, before add() appends it.
    const Array r = make_integers(stream("positions"), all().size(), DType::int32, {T}, 0, S_max - 1);
    std::vector<int64_t> p;
    for (double v : r.values) p.push_back(static_cast<int64_t>(v));
    add(T, Hq, Hkv, Dh, S_max, p, "~U[0," + std::to_string(S_max - 1) + "]");
  }
};

void core_normal(CoreBuilder& b) {
  b.add_list(32, 8, 128, 2048, {1500});
  b.add_random(4, 16, 4, 128, 1024);
  b.add_run(16, 8, 2, 64, 512, 300);
  b.add_run(64, 8, 8, 64, 128, 0);
  b.add_run(8, 8, 1, 128, 2048, 2040);
  b.add_run(8, 4, 1, 64, 256, 100);
  b.mask_block(0, kAll, 0, 10);
  b.note("mask j<10");
}

void core_boundary(CoreBuilder& b) {
  b.add_list(4, 4, 64, 1, {0});  // one live row: o = v[0]
  b.add_list(8, 1, 128, 64, {0});
  b.add_list(8, 1, 128, 2048, {2047});
  b.add_list(32, 4, 128, 2048, {2047, 0});
  b.add_run(12, 16, 2, 64, 512, 500);
  b.add_run(4, 8, 8, 128, 256, 252);
  b.add_list(32, 1, 64, 1024, {1023});
  b.add_list(8, 8, 64, 64, {63});
}

void core_overflow(CoreBuilder& b) {
  // Logits with a spread of ~16 (×4 on q and on k): most exceed fp16's exp range 11.09.
  b.add_run(4, 8, 2, 128, 512, 508);
  b.scale("q", 4);
  b.scale("k_cache", 4, {1, 0, 512});
  b.note("q,k x4");
  // Logits of ~1e4: beyond the exp range of fp32 (88.7) and of double (709.8).
  b.add_list(4, 1, 64, 256, {200, 255});
  b.signed_uniform("q", 100, 250);
  b.signed_uniform("k_cache", 100, 250, {1, 0, 256});
  b.note("|q|,|k|~U[100,250]");
  // Values at the top of fp16: o is a convex combination of them, so |o| <= 65504.
  b.add_run(4, 8, 2, 128, 1024, 1000);
  b.signed_uniform("v_cache", 6e4, 65504, {1, 0, 1004});
  b.note("|v|~U[6e4,65504]");
  b.add_run(3, 4, 4, 64, 300, 200);
  b.scale("q", 4);
  b.scale("k_cache", 4, {1, 0, 203});
  b.fill("v_cache", 65504, {1, 0, 203});
  b.note("q,k x4 v=65504");
  // q·k itself far past fp16's max (an fp16 accumulator overflows; fp32 does not).
  b.add_run(2, 4, 2, 128, 128, 100);
  b.signed_uniform("k_cache", 6e4, 65504, {1, 0, 102});
  b.note("|k|~U[6e4,65504]");
}

void core_nan_inf(CoreBuilder& b) {
  // Not yet written: past positions 103 nothing is read.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.note("nan/inf past pos");
  b.set("k_cache", {0, 104, 0}, kNaN);
  b.set("v_cache", {1, 104, 5}, kNaN);
  b.set("k_cache", {1, 150, 3}, kInf);
  b.set("v_cache", {0, 200, 63}, -kInf);
  b.set("k_cache", {1, 255, 10}, -kInf);
  b.add_list(8, 2, 128, 1024, {700});
  b.fill("k_cache", kNaN, {1, 701});
  b.fill("v_cache", kNaN, {1, 701});
  b.note("all nan past pos");
  // Masked-out rows inside the causal range.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.mask_block(0, kAll, 20, 40);
  b.fill("k_cache", kNaN, {1, 20, 30});
  b.fill("v_cache", kInf, {1, 25, 35});
  b.fill("k_cache", -kInf, {1, 35, 40});
  b.note("mask 20..39 nan/inf there");
  // Live: a NaN in k of kv head 1 (heads 4..7 all NaN), in v of kv head 0 at dim 5 (that
  // element of heads 0..3 NaN), +Inf in v of kv head 0 at dim 7.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.set("k_cache", {1, 50, 3}, kNaN);
  b.set("v_cache", {0, 10, 5}, kNaN);
  b.set("v_cache", {0, 30, 7}, kInf);
  b.note("live nan k h1 j50, nan v h0 j10 d5, inf v h0 j30 d7");
  // Live only for the later queries of the chunk: queries at 100, 101 stay finite.
  b.add_run(4, 4, 1, 64, 128, 100);
  b.set("k_cache", {0, 102, 9}, kNaN);
  b.note("nan k j102");
  // Fully masked rows (t = 1 entirely, t = 2 up to its own position) give 0.
  b.add_run(4, 4, 2, 64, 128, 60);
  b.mask_block(1, 2, 0, kAll);
  b.mask_block(2, 3, 0, 63);
  b.fill("k_cache", kNaN, {1, 64});
  b.note("rows 1,2 fully masked");
  b.add_list(2, 1, 128, 16, {0});
  b.mask_block(0, 1, 0, 1);
  b.set("k_cache", {0, 0, 0}, kNaN);
  b.note("masked only row nan");
}

void core_shape(CoreBuilder& b) {
  b.add_list(1, 1, 2, 1, {0});
  b.add_list(3, 1, 80, 1000, {999});
  b.add_run(7, 6, 3, 96, 257, 250);
  b.add_random(7, 5, 5, 6, 65);
  b.add_run(7, 12, 2, 64, 1537, 1000);
  b.add_run(64, 4, 2, 64, 129, 65);
  b.add_random(64, 3, 3, 80, 300);
  b.add_run(64, 2, 1, 3, 100, 36);
  b.add_run(1, 5, 1, 96, 1537, 1536);
}

// --- the fused qkv_attention op ---

class FusedBuilder : public Builder {
 public:
  using Builder::Builder;

  void add(int64_t T, int64_t D, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
           int64_t pos, RopeStyle style, double theta = 10000) {
    const int64_t qkv = (Hq + 2 * Hkv) * Dh, hqdh = Hq * Dh;
    Case& c = CaseBuilder::add(
        sizes_text({{"t", T}, {"d", D}, {"hq", Hq}, {"hkv", Hkv}, {"dh", Dh}, {"s", S_max}, {"pos", pos}}) + " " +
            std::string(rope_style_name(style)),
        {{"T", T}, {"D", D}, {"S_max", S_max}, {"Hq", Hq}, {"Hkv", Hkv}, {"Dh", Dh}, {"QKV", qkv}, {"HqDh", hqdh}},
        {{"pos", std::to_string(pos)},
         {"heads", std::to_string(Hq)},
         {"kv_heads", std::to_string(Hkv)},
         {"head_dim", std::to_string(Dh)},
         {"theta", number_text(theta)},
         {"style", std::string(rope_style_name(style))}});
    if (theta != 10000) note("theta=" + std::to_string(static_cast<int64_t>(theta)));
    const auto sd = [](int64_t n) { return 1 / std::sqrt(static_cast<double>(n)); };
    c.inputs["x"] = normal("x", {T, D}, 0, 1);
    c.inputs["w_qkv"] = normal("w_qkv", {qkv, D}, 0, sd(D));
    c.inputs["w_o"] = normal("w_o", {D, hqdh}, 0, sd(hqdh));
    c.inputs["k_cache"] = normal("k_cache", {Hkv, S_max, Dh}, 0, 1);
    c.inputs["v_cache"] = normal("v_cache", {Hkv, S_max, Dh}, 0, 1);
    garbage_from(pos);
  }

  // Rows of w_qkv that make q and k (the first (Hq + Hkv)·Dh), and the old k (< pos), ×f.
  void scale_logits(double f) {
    const Case& c = last();
    const int64_t qk_rows = (c.dims.at("Hq") + c.dims.at("Hkv")) * c.dims.at("Dh");
    scale("w_qkv", f, rows(0, qk_rows));
    scale("k_cache", f, {1, 0, pos()});
    note("q,k x" + number_text(f));
  }

  int64_t pos() { return std::stoll(last().params.at("pos")); }

  // The weight-dtype axis: case i's float weights (after its edits) become int8 weights with
  // per-output-channel scales, as a framework quantizes a checkpoint. Row n of w_qkv and w_o
  // is first multiplied by 10^U[−span, span] (span_qk for the q and k rows of w_qkv, span_v
  // for its v rows, span_o for w_o: the scales then span those orders of magnitude), then
  // ws[n] = fp32(max_c |w[n, c]| / 127) (1 for a zero row) and w_int = clamp(round(w / ws),
  // −127, 127). The inputs w_qkv_scale and w_o_scale are added; the name gains "w=int8".
  // A case whose weights are int8 already is left as it is.
  void to_int8(size_t i, double span_qk, double span_v, double span_o) {
    Case& c = all().at(i);
    if (c.inputs.at("w_qkv").dtype == DType::int8) return;
    const int64_t qk_rows = (c.dims.at("Hq") + c.dims.at("Hkv")) * c.dims.at("Dh");
    quantize(c, "w_qkv", i, [&](int64_t n) { return n < qk_rows ? span_qk : span_v; });
    quantize(c, "w_o", i, [&](int64_t) { return span_o; });
    c.name = "w=int8 " + c.name;
  }
  void to_int8(double span_qk, double span_v, double span_o) { to_int8(index(), span_qk, span_v, span_o); }
  void all_to_int8(double span_qk, double span_v, double span_o) {
    for (size_t i = 0; i < all().size(); ++i) to_int8(i, span_qk, span_v, span_o);
  }

 private:
  template <typename Span>
  void quantize(Case& c, const std::string& name, uint64_t i, Span span) {
    Array& w = c.inputs.at(name);
    const int64_t N = w.shape.at(0), K = w.shape.at(1);
    const Array u = make_uniform(stream(name + "_channel_factor"), i, DType::float64, {N}, -1, 1);
    Array q = make_constant(DType::int8, {N, K}, 0);
    Array scale = make_constant(DType::float32, {N}, 1);
    for (int64_t n = 0; n < N; ++n) {
      const double f = std::pow(10.0, span(n) * u.values[static_cast<size_t>(n)]);
      double m = 0;
      for (int64_t k = 0; k < K; ++k) m = std::max(m, std::fabs(w.values[static_cast<size_t>(n * K + k)] * f));
      const double ws = m > 0 ? round_to_dtype(m / 127, DType::float32) : 1.0;
      scale.values[static_cast<size_t>(n)] = ws;
      for (int64_t k = 0; k < K; ++k) {
        const double r = std::nearbyint(w.values[static_cast<size_t>(n * K + k)] * f / ws);
        q.values[static_cast<size_t>(n * K + k)] = std::min(127.0, std::max(-127.0, r));
      }
    }
    w = std::move(q);
    c.inputs[name + "_scale"] = std::move(scale);
  }
};

void fused_normal(FusedBuilder& b) {
  b.add(1, 512, 8, 2, 64, 1024, 700, kInterleaved);
  b.add(16, 256, 4, 4, 64, 256, 100, kHalf, 500000);
  b.add(64, 512, 8, 2, 64, 128, 0, kHalf);
  b.add(8, 256, 4, 1, 64, 64, 40, kInterleaved, 500000);
  b.mask_block(0, kAll, 0, 5);
  b.note("mask j<5");
  b.add(4, 512, 4, 2, 128, 512, 300, kHalf);
}

void fused_boundary(FusedBuilder& b) {
  b.add(1, 256, 2, 1, 128, 1, 0, kHalf);
  b.add(1, 256, 4, 4, 64, 512, 511, kInterleaved);
  b.add(8, 512, 8, 1, 64, 128, 120, kHalf, 500000);
  b.add(4, 512, 16, 2, 64, 1024, 1000, kInterleaved);
  b.add(2, 512, 4, 1, 128, 2048, 2046, kHalf);
  b.add(16, 256, 4, 2, 64, 16, 0, kInterleaved);
}

void fused_overflow(FusedBuilder& b) {
  b.add(4, 256, 4, 2, 64, 256, 200, kHalf);
  b.scale_logits(4);
  b.add(4, 256, 4, 1, 64, 128, 60, kInterleaved);
  b.scale_logits(16);
  // The old v at the top of fp16; w_o ×0.1 keeps y (~0.1·|v|) finite in fp16.
  b.add(2, 256, 4, 1, 128, 512, 500, kHalf);
  b.signed_uniform("v_cache", 6e4, 65504, {1, 0, 500});
  b.scale("w_o", 0.1);
  b.note("|v|~U[6e4,65504] w_o x0.1");
  b.add(2, 256, 2, 2, 64, 128, 100, kInterleaved, 500000);
  b.signed_uniform("k_cache", 6e4, 65504, {1, 0, 100});
  b.note("|k|~U[6e4,65504]");
}

void fused_nan_inf(FusedBuilder& b) {
  // pos ... pos+T−1 are overwritten before they are read; beyond is never read.
  b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
  b.fill("k_cache", kNaN, {1, 60});
  b.fill("v_cache", kNaN, {1, 60});
  b.note("nan at j>=pos");
  b.add(1, 256, 4, 1, 64, 256, 100, kInterleaved);
  b.fill("k_cache", kInf, {1, 100, 101});
  b.fill("v_cache", -kInf, {1, 100, 101});
  b.set("k_cache", {0, 200, 1}, kNaN);
  b.set("v_cache", {0, 255, 63}, kInf);
  b.note("inf at j=pos, nan/inf past");
  // Masked-out old rows.
  b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
  b.mask_block(0, kAll, 10, 20);
  b.fill("k_cache", kNaN, {1, 10, 15});
  b.fill("v_cache", kInf, {1, 15, 20});
  b.note("mask 10..19 nan/inf there");
  // A live NaN in an old k row of kv head 1: heads 2, 3 of every query are NaN, so all of y.
  b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
  b.set("k_cache", {1, 30, 7}, kNaN);
  b.note("live nan k h1 j30");
  // Fully masked row 2 gives y[2, :] = 0.
  b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
  b.mask_block(2, 3, 0, kAll);
  b.fill("k_cache", kNaN, {1, 64});
  b.note("row 2 fully masked");
}

void fused_shape(FusedBuilder& b) {
  b.add(1, 1, 1, 1, 2, 1, 0, kHalf);
  b.add(1, 72, 3, 1, 6, 65, 64, kInterleaved);
  b.add(7, 200, 6, 2, 2, 257, 250, kHalf);
  b.add(7, 96, 5, 5, 80, 1000, 500, kInterleaved);
  b.add(64, 136, 2, 1, 64, 300, 129, kHalf);
  b.add(64, 256, 4, 2, 96, 1537, 1000, kInterleaved, 500000);
}

// Cases that only the int8-weight path has: quantization edge cases on the activations
// and weights, each turned to int8 (with its own scale spans) before any int8 edit.
void fused_int8_extras(FusedBuilder& b) {
  if (b.input_class() == InputClass::normal) {
    // A zero token: its scale is 0, its q, k and v exactly 0 (a 0 row in the cache).
    b.add(8, 256, 4, 2, 64, 128, 40, kHalf);
    b.fill("x", 0.0, {0, 3, 4});
    b.note("x row 3 = 0");
    b.to_int8(0.5, 1.5, 1.5);
    // Fp16 x rounds to exact multiples of s more often; chunk over a GQA 4:1 layer.
    b.add(16, 512, 8, 2, 64, 256, 200, kInterleaved);
    b.to_int8(0.5, 1.5, 1.5);
  }
  if (b.input_class() == InputClass::boundary) {
    // Per-channel scales spanning six orders of magnitude on v and w_o.
    b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
    b.to_int8(0.5, 3, 1);
    b.note("scales 1e-3..1e3");
    // The int8 minimum −128 (never produced by symmetric quantization, still valid input).
    b.add(2, 256, 4, 1, 64, 64, 10, kInterleaved);
    b.to_int8(0, 0, 0);
    b.fill("w_qkv", -128, {0, 0, 64});
    b.fill("w_o", -128, {0, 0, 1});
    b.note("w=-128 rows");
    // One token in a chunk is all zeros and one holds a single nonzero value.
    b.add(4, 512, 8, 2, 64, 64, 0, kHalf);
    b.fill("x", 0.0, {0, 1, 2});
    b.fill("x", 0.0, {0, 2, 3});
    b.set("x", {2, 7}, 3.0);
    b.to_int8(0, 1, 1);
    b.note("x row 1 = 0, row 2 one-hot");
  }
  if (b.input_class() == InputClass::nan_inf) {
    // A NaN in x[1, 5]: token 1's scale is NaN, its q, k, v all NaN; later queries read
    // its k, so y rows 1..3 are NaN and row 0 is finite.
    b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
    b.to_int8(0.5, 1, 1);
    b.set("x", {1, 5}, kNaN);
    b.note("x[1,5]=nan");
    // +Inf in x[2, 0] and −Inf in x[3, 9] behave the same way.
    b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
    b.to_int8(0.5, 1, 1);
    b.set("x", {2, 0}, kInf);
    b.set("x", {3, 9}, -kInf);
    b.note("x[2,0]=inf x[3,9]=-inf");
  }
}

}  // namespace

std::vector<Case> attention_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  CoreBuilder b("attention", input_class, dtype);
  build_class<CoreBuilder>(b, {core_normal, core_boundary, core_overflow, core_nan_inf, core_shape});
  return b.take();
}

std::vector<Case> qkv_attention_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  std::vector<Case> cases;
  // The weight-dtype axis: the class's cases with float weights (in `dtype`), then again,
  // from their own streams, with int8 weights, then the int8-only cases.
  for (const bool int8 : {false, true}) {
    FusedBuilder b(int8 ? "qkv_attention_int8" : "qkv_attention", input_class, dtype);
    build_class<FusedBuilder>(b, {fused_normal, fused_boundary, fused_overflow, fused_nan_inf, fused_shape});
    if (int8) {
      fused_int8_extras(b);
      // Logit-scaled and near-65504 cases keep their magnitudes: no channel factors there.
      const bool overflow = input_class == InputClass::overflow;
      b.all_to_int8(overflow ? 0 : 0.5, overflow ? 0 : 1.5, overflow ? 0 : 1);
    }
    for (Case& c : b.take()) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace npukit::golden
