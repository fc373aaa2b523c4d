"""A made-up C history spanning two eras, the newer library breaking the older's code.

The `matcher` library wraps a regular-expression engine; CMake globs its sources and tests (one
ctest test per `tests/test_*.c`):
  era 1 (July 2023): PCRE1 (`pkg_check_modules(PCRE REQUIRED libpcre)`, pcre_compile);
      PR #1 adds `count_matches` (src/count.c) + its test `test_count`;
  era 2 (September 2023): PCRE2 (`libpcre2-8`, pcre2_compile): the first era's code does not
      compile here (no pcre.h in its image); PR #2 adds `first_match` + its test `test_first`.
Both eras are bookworm's (gcc 12); their images differ by the library.
"""

from __future__ import annotations

from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

HEADER = "#ifndef MATCHER_H\n#define MATCHER_H\n\nint matches(const char *pattern, const char *text);\n\n#endif\n"
COUNT_H = "int count_matches(const char *pattern, const char **texts, int n);\n"
FIRST_H = "int first_match(const char *pattern, const char **texts, int n);\n"
PCRE1 = """#include <string.h>
#include <pcre.h>
#include "matcher.h"

int matches(const char *pattern, const char *text) {
    const char *error;
    int offset;
    int vector[30];
    pcre *re = pcre_compile(pattern, 0, &error, &offset, NULL);
    if (re == NULL)
        return -1;
    int rc = pcre_exec(re, NULL, text, (int)strlen(text), 0, 0, vector, 30);
    pcre_free(re);
    return rc >= 0;
}
"""
PCRE2 = """#include <string.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "matcher.h"

int matches(const char *pattern, const char *text) {
    int error;
    PCRE2_SIZE offset;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &error,
                                   &offset, NULL);
    if (re == NULL)
        return -1;
    pcre2_match_data *data = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, 0, data, NULL);
    pcre2_match_data_free(data);
    pcre2_code_free(re);
    return rc >= 0;
}
"""
COUNT = """#include "matcher.h"
#include "count.h"
int count_matches(const char *pattern, const char **texts, int n) {
    int found = 0;
    for (int i = 0; i < n; i++)
        if (matches(pattern, texts[i]) == 1)
            found++;
    return found;
}
"""
FIRST = """#include "matcher.h"
#include "first.h"
int first_match(const char *pattern, const char **texts, int n) {
    for (int i = 0; i < n; i++)
        if (matches(pattern, texts[i]) == 1)
            return i;
    return -1;
}
"""
TEST_MATCHES = """#include "matcher.h"

int main(void) {
    return matches("^a+b$", "aaab") == 1 && matches("^a+b$", "ba") == 0 ? 0 : 1;
}
"""
TEST_COUNT = """#include "count.h"

int main(void) {
    const char *texts[] = {"cat", "dog", "cart"};
    return count_matches("^ca", texts, 3) == 2 ? 0 : 1;
}
"""
TEST_FIRST = """#include "first.h"

int main(void) {
    const char *texts[] = {"dog", "cat", "cart"};
    return first_match("^ca", texts, 3) == 1 ? 0 : 1;
}
"""
CMAKE = """cmake_minimum_required(VERSION 3.13)
project(matcher C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE REQUIRED {module})
include_directories(src ${{PCRE_INCLUDE_DIRS}})
file(GLOB SOURCES src/*.c)
add_library(matcher ${{SOURCES}})
target_link_libraries(matcher ${{PCRE_LIBRARIES}})
enable_testing()
file(GLOB TESTS tests/test_*.c)
foreach(test ${{TESTS}})
  get_filename_component(name ${{test}} NAME_WE)
  add_executable(${{name}} ${{test}})
  target_link_libraries(${{name}} matcher)
  add_test(NAME ${{name}} COMMAND ${{name}})
endforeach()
"""


def make_matcher(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    first_era = {
        "CMakeLists.txt": CMAKE.format(module="libpcre"),
        "src/matcher.h": HEADER,
        "src/matcher.c": PCRE1,
        "tests/test_matches.c": TEST_MATCHES,
    }
    commit_files(path, first_era, "Start matcher", "2023-07-10T12:00:00Z")
    commit_files(
        path,
        {"src/count.h": COUNT_H, "src/count.c": COUNT, "tests/test_count.c": TEST_COUNT},
        "Count matches (#1)\n\nHow many texts match.",
        "2023-07-20T12:00:00Z",
    )
    second_era = {"CMakeLists.txt": CMAKE.format(module="libpcre2-8"), "src/matcher.c": PCRE2}
    commit_files(path, second_era, "Move to PCRE2", "2023-09-05T12:00:00Z")
    commit_files(
        path,
        {"src/first.h": FIRST_H, "src/first.c": FIRST, "tests/test_first.c": TEST_FIRST},
        "Find the first match (#2)\n\nWhich text matches first.",
        "2023-09-15T12:00:00Z",
    )
    return path
