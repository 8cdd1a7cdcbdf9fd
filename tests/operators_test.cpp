// Every operator runtime/operators.cmake declares is wired everywhere a tool looks for it:
// the registry (in the declared order, under its own name), the gate's hooks with cases
// for each dtype they gate, and validation that names the op. Adding an op changes no
// test here; an op whose files are missing or misnamed fails here first.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

// NPUKIT_OPERATOR_NAMES: the declared operators, comma-separated (tests/CMakeLists.txt).
std::vector<std::string> declared() {
  std::vector<std::string> out;
  std::stringstream s(NPUKIT_OPERATOR_NAMES);
  for (std::string name; std::getline(s, name, ',');) out.push_back(name);
  return out;
}

TEST(Operators, TheRegistryHoldsEveryDeclaredOpInOrder) {
  std::vector<std::string> names;
  for (const OpSpec* op : all_ops()) names.push_back(op->name);
  EXPECT_EQ(names, declared());
  for (const std::string& name : declared()) EXPECT_EQ(find_op(name).name, name);
}

TEST(Operators, EveryOpHasGateHooksWithCasesForEachGatedDtype) {
  for (const OpSpec* op : all_ops()) {
    SCOPED_TRACE(op->name);
    const GateHooks* hooks = gate_hooks(op->name);
    ASSERT_NE(hooks, nullptr);
    EXPECT_FALSE(hooks->dtypes.empty());
    EXPECT_TRUE(hooks->cases && hooks->reference && hooks->tolerance);
    EXPECT_FALSE(hooks->nan_contract.empty());
    for (DType t : hooks->dtypes) {
      EXPECT_FALSE(hooks->cases(golden::InputClass::normal, t).empty()) << dtype_name(t);
    }
  }
  EXPECT_EQ(gate_hooks("softmax"), nullptr);
}

TEST(Operators, EveryOpRefusesAnEmptyCallNamingItselfAndATensor) {
  for (const OpSpec* op : all_ops()) {
    SCOPED_TRACE(op->name);
    ASSERT_FALSE(op->kernels.empty());
    const std::string target = op->kernels.begin()->first;
    try {
      bind_call(*op, target, {}, {});
      ADD_FAILURE() << "an empty call was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(op->name + ": missing ", 0), 0u) << e.what();
    }
  }
}

// Operator plug-ins register at run time (runtime/plugin.h): the registry takes the same
// OpSpec again as a no-op and refuses another op of a taken name, leaving the list as it was.
TEST(Operators, RegisteringRefusesATakenNameAndIgnoresTheSameOp) {
  const size_t before = all_ops().size();
  register_op(find_op("rms_norm"));
  OpSpec other = find_op("rms_norm");
  try {
    register_op(other);
    ADD_FAILURE() << "a second rms_norm was registered";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_STREQ(e.what(), "op 'rms_norm' is already registered: op names must be unique");
  }
  EXPECT_EQ(all_ops().size(), before);
}

}  // namespace
}  // namespace npukit
