"""Messages and reports are formatted through fmt (runtime/message.h), where the one-line
rule is kept: no source of the kit builds text with printf-style formatting or an output
string stream. Tests are exempt (they capture stream writers); reading through a
std::stringstream is not formatting and stays allowed.

usage: message_format_check.py REPO_ROOT
"""
import os
import re
import sys

KIT_DIRS = ["runtime", "simulator", "tools", "golden", "layouts", "schedules", "ops", "bench"]
# sprintf, snprintf, vsnprintf build strings; printf and fprintf print and are allowed.
FORBIDDEN = re.compile(r"\bv?sn?printf\s*\(|\bostringstream\b")


def offenders(root):
    for d in KIT_DIRS:
        for base, _, files in os.walk(os.path.join(root, d)):
            for name in files:
                if not name.endswith((".cpp", ".h", ".cc", ".c")):
                    continue
                path = os.path.join(base, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        code = line.split("//", 1)[0]
                        if FORBIDDEN.search(code):
                            yield f"{os.path.relpath(path, root)}:{number}: {line.strip()}"


def main():
    found = list(offenders(sys.argv[1]))
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} place(s) format text without runtime/message.h (fmt): use message(), fail() or append()")
        return 1
    print("every message and report is formatted through fmt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
