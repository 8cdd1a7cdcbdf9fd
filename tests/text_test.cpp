// runtime/text.h's message rule: one printable line of UTF-8, at most kMessageLimit bytes,
// the cut marked; and runtime/message.h's formatter, which applies it to every message.
#include <gtest/gtest.h>

#include <string>

#include "runtime/error.h"
#include "runtime/message.h"
#include "runtime/text.h"

namespace {

using npukit::kMessageLimit;
using npukit::one_line;

TEST(OneLine, ControlBytesBecomeQuestionMarks) {
  EXPECT_EQ(one_line("a\nb\tc\x01\x7f" "d"), "a?b?c??d");
  EXPECT_EQ(one_line("C1 \xc2\x85 next line"), "C1 ?? next line");  // U+0085 is a control
}

TEST(OneLine, Utf8StaysAndMalformedBytesDoNot) {
  EXPECT_EQ(one_line("/tmp/r\xc3\xa9sum\xc3\xa9/\xe6\x97\xa5.yaml"), "/tmp/r\xc3\xa9sum\xc3\xa9/\xe6\x97\xa5.yaml");
  EXPECT_EQ(one_line("\xff\xfe"), "??");                 // never a UTF-8 byte
  EXPECT_EQ(one_line("\xc0\xaf"), "??");                 // an overlong '/'
  EXPECT_EQ(one_line("x\xe6\x97"), "x??");              // a sequence cut short by the end
  EXPECT_EQ(one_line("\xe6" "ab"), "?ab");              // a lead byte without continuations
}

TEST(OneLine, LongMessagesAreCutAtTheLimitWithTheCutMarked) {
  const std::string m = one_line(std::string(10'000'000, 'x'));
  EXPECT_EQ(m, std::string(kMessageLimit, 'x') + "... [" + std::to_string(10'000'000 - kMessageLimit) + " bytes cut]");
  EXPECT_EQ(one_line(std::string(kMessageLimit, 'y')), std::string(kMessageLimit, 'y'));  // at the limit: whole
  // The cut falls between characters: a 3-byte character straddling the limit goes whole.
  const std::string wide = std::string(kMessageLimit - 1, 'z') + "\xe6\x97\xa5";
  EXPECT_EQ(one_line(wide), std::string(kMessageLimit - 1, 'z') + "... [3 bytes cut]");
}

// The formatter is where the rule is kept: a message is one line however it was composed.
TEST(Message, FormatsThroughFmtAndKeepsTheRule) {
  EXPECT_EQ(npukit::message("{}: {} = {:.2f}", "arch", 7, 0.125), "arch: 7 = 0.12");
  EXPECT_EQ(npukit::message("key {}", "a\nb"), "key a?b");  // an echo cannot start a new line
  const std::string cut = npukit::message("{}", std::string(2 * kMessageLimit, 'v'));
  EXPECT_EQ(cut, std::string(kMessageLimit, 'v') + "... [" + std::to_string(kMessageLimit) + " bytes cut]");
}

TEST(Message, EveryErrorIsOneLine) {
  try {
    npukit::fail(npukit::Errc::invalid_argument, "tensor {}: dims {}", "x\ry", 3);
    FAIL() << "fail() returned";
  } catch (const npukit::Error& e) {
    EXPECT_EQ(std::string(e.what()), "tensor x?y: dims 3");
    EXPECT_EQ(e.code(), npukit::Errc::invalid_argument);
  }
  // Composed without the formatter, still one line: Error applies the rule itself.
  EXPECT_EQ(std::string(npukit::Error(npukit::Errc::internal, "two\nlines").what()), "two?lines");
}

}  // namespace
