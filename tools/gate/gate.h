// The precision gate: every op × target × dtype × input class × case, checked against the
// op's golden reference under its tolerance policy.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "golden/metrics.h"
#include "golden/tolerance.h"
#include "runtime/op_spec.h"
#include "tools/gate/gate_hooks.h"

namespace npukit::gate {

struct Options {
  std::vector<std::string> ops;      // empty = all
  std::vector<std::string> targets;  // empty = "cpu"
  std::vector<std::string> classes;  // empty = all input classes
  std::vector<std::string> dtypes;   // empty = every dtype the op gates
  int case_index = -1;               // >= 0: only that case of each class
  // > 1: run each case this many times, alternately on 1 and 2 Halide threads, and report
  // NONDETERMINISTIC unless every run writes the same bytes as the first.
  int repeat = 1;
  bool isolate = true;  // run each group in a child process, so a crashing kernel is reported
  // The arguments that select a target in a repro line, where "--target T" would not (an
  // external kernel: "--impl LIB.so:SYMBOL --target-name T").
  std::map<std::string, std::string> target_flags;
  // The arguments that make an op known in a repro line, by op: "--plugin PATH" for the op
  // of an operator plug-in.
  std::map<std::string, std::string> op_flags;
};

struct OutputResult {
  std::string name;
  std::string dtype;
  golden::Metrics metrics;
  golden::Tolerance tolerance;
  golden::Verdict verdict;
};

struct CaseResult {
  std::string op, target, dtype, input_class;
  int case_index = 0;
  std::string case_name;  // e.g. "rows=3 hidden=4097"
  golden::Status status = golden::Status::fail;
  std::string metric, summary;  // the deciding metric and "value <= limit" text
  std::string error;            // kernel error, guard corruption, crash
  bool guard_corrupted = false;
  std::vector<OutputResult> outputs;
  double seconds = 0;
  std::string repro;
};

// Runs the gate over `ops` (normally all_ops(); tests pass doctored copies), each checked
// against the hooks gate_hooks() has for its name.
std::vector<CaseResult> run(const std::vector<const OpSpec*>& ops, const Options& options);

// The same with the hooks given (tests doctor them too).
struct GatedOp {
  const OpSpec* spec;
  const GateHooks* hooks;
};
std::vector<CaseResult> run(const std::vector<GatedOp>& ops, const Options& options);

// Exit code per the gate's contract: 0 all pass (UNSUPPORTED allowed), 1 any FAIL,
// MISTRUSTED or NONDETERMINISTIC, 3 a crash or a guard-region corruption (takes precedence).
int exit_code(const std::vector<CaseResult>& results);

// The (op, target) pairs the user asked for by name (each --op with each target) of which
// no case ran: every one UNSUPPORTED, or none selected. One line each, naming the pair and
// the first case's reason; and, without --op, each target named with --target on which no
// case of any op ran (no device). A gate that checked nothing of what it was asked to check must
// not pass: `npukit gate` exits 2 with these (after the report; a crash's 3 comes first).
std::vector<std::string> unrunnable_requests(const std::vector<CaseResult>& results, const Options& options);

// The ops whose golden reference is not written yet (it threw golden::NotWritten: a stub
// of `npukit new-op`), one line each with the stub's message. Their cases FAIL with metric
// "golden"; `npukit gate` then exits 2 with these lines: nothing of the op was checked.
std::vector<std::string> unwritten_goldens(const std::vector<CaseResult>& results);

}  // namespace npukit::gate
