#include "ops/amx_fuse_k.h"

#include <vector>

namespace npukit::ops {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// The widest tile: A holds 64 bytes of a row, B 16 rows (AMX palette 1).
constexpr int kMaxSteps = 16;

// acc = tile_matmul(rows, colbytes, 4, acc, tile_load(rows, 4, A, a_off, a_stride),
//                   tile_load(1, colbytes, B, b_off, _)), as ExtractTileOperations makes it.
struct Step {
  const Store* store = nullptr;
  const Call *matmul = nullptr, *a = nullptr, *b = nullptr;
};

bool is_call(const Call* c, const char* name, size_t args) { return c && c->name == name && c->args.size() == args; }

bool parse(const Stmt& s, Step& st) {
  st.store = s.as<Store>();
  if (!st.store) return false;
  st.matmul = st.store->value.as<Call>();
  if (!is_call(st.matmul, "tile_matmul", 6)) return false;
  const Load* acc = st.matmul->args[3].as<Load>();
  st.a = st.matmul->args[4].as<Call>();
  st.b = st.matmul->args[5].as<Call>();
  return acc && acc->name == st.store->name && is_call(st.a, "tile_load", 5) && is_call(st.b, "tile_load", 5) &&
         is_const(st.matmul->args[2], 4) && is_const(st.a->args[1], 4) && is_const(st.b->args[0], 1);
}

bool same_variable(const Expr& x, const Expr& y) {
  const Variable *a = x.as<Variable>(), *b = y.as<Variable>();
  return a && b && a->name == b->name;
}

// Whether step `j` of a run starting with `first` continues it; the B row distance is set
// by step 1 and must hold for every later step.
bool continues(const Step& first, const Step& s, int j, int64_t& b_row_bytes) {
  const Call *m0 = first.matmul, *m = s.matmul;
  if (s.store->name != first.store->name || !equal(m->args[0], m0->args[0]) || !equal(m->args[1], m0->args[1])) return false;
  if (!same_variable(s.a->args[2], first.a->args[2]) || !equal(s.a->args[0], first.a->args[0]) ||
      !equal(s.a->args[4], first.a->args[4])) {
    return false;
  }
  if (!same_variable(s.b->args[2], first.b->args[2]) || !equal(s.b->args[1], first.b->args[1])) return false;
  const Expr da = simplify(s.a->args[3] - first.a->args[3]), db = simplify(s.b->args[3] - first.b->args[3]);
  const int64_t *a_step = as_const_int(da), *b_step = as_const_int(db);
  if (!a_step || !b_step || *a_step != 4 * int64_t(j)) return false;
  if (j == 1) b_row_bytes = *b_step;
  return b_row_bytes > 0 && *b_step == b_row_bytes * j;
}

Stmt fuse(const Step& first, int steps, int64_t b_row_bytes) {
  auto like = [](const Expr& e, int64_t v) { return make_const(e.type(), v); };
  const Call *a = first.a, *b = first.b, *m = first.matmul;
  const Expr kbytes = like(m->args[2], 4 * steps);
  Expr A = Call::make(a->type, a->name, {a->args[0], like(a->args[1], 4 * steps), a->args[2], a->args[3], a->args[4]},
                      a->call_type);
  Expr B = Call::make(b->type, b->name, {like(b->args[0], steps), b->args[1], b->args[2], b->args[3], like(b->args[4], b_row_bytes)},
                      b->call_type);
  Expr mm = Call::make(m->type, m->name, {m->args[0], m->args[1], kbytes, m->args[3], A, B}, m->call_type);
  const Store* s = first.store;
  return Store::make(s->name, mm, s->index, s->param, s->predicate, s->alignment);
}

void flatten(const Stmt& s, std::vector<Stmt>& out) {
  if (const Block* b = s.as<Block>()) {
    flatten(b->first, out);
    flatten(b->rest, out);
  } else {
    out.push_back(s);
  }
}

}  // namespace

Stmt AmxFuseK::visit(const Block* op) {
  std::vector<Stmt> seq, out;
  flatten(op, seq);
  for (size_t i = 0; i < seq.size();) {
    Step first;
    if (!parse(seq[i], first)) {
      out.push_back(mutate(seq[i]));
      ++i;
      continue;
    }
    int steps = 1;
    int64_t b_row_bytes = 0;
    for (Step s; steps < kMaxSteps && i + steps < seq.size() && parse(seq[i + steps], s) &&
                 continues(first, s, steps, b_row_bytes);) {
      ++steps;
    }
    out.push_back(steps > 1 ? fuse(first, steps, b_row_bytes) : seq[i]);
    fused_steps += steps - 1;
    i += steps;
  }
  return Block::make(out);
}

}  // namespace npukit::ops
