// Parsing of the NAME=VALUE arguments the subcommands share (--param, --in, --out,
// --shape, --schedule). Errors are npukit::Error naming the flag and the item.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace npukit::cli {

// "name=value" → {name, value}; `flag` names the option in the error.
std::pair<std::string, std::string> split_assignment(const std::string& s, const char* flag);

// Every "name=value" of a repeated option, each name once.
std::map<std::string, std::string> assignment_map(const std::vector<std::string>& items, const char* flag);

// "M=1,K=4096,N=4096" → {M: 1, K: 4096, N: 4096}: integers, each name once.
std::map<std::string, int64_t> integer_assignments(const std::string& text, const char* flag);

// The text of a --schedule argument: itself, or the contents of FILE for "@FILE" (what
// `npukit tune --emit FILE` writes), surrounding white space dropped.
std::string schedule_argument(const std::string& arg);

}  // namespace npukit::cli
