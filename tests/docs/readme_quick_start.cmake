# SPDX-License-Identifier: Apache-2.0
# Checks that the README's quick start is examples/quick_start.cpp to the letter: the README's
# first ```cpp block, between its fences, must be the whole file, which the tests build and run
# (example.quick_start).
# usage: cmake -DSOURCE_DIR=<repository> -P readme_quick_start.cmake
file(READ ${SOURCE_DIR}/README.md readme)
file(READ ${SOURCE_DIR}/examples/quick_start.cpp example)
set(fence "```")
set(opening "\n${fence}cpp\n")
string(FIND "${readme}" "${opening}" start)
if(start EQUAL -1)
    message(FATAL_ERROR "README.md has no ${fence}cpp block")
endif()
string(LENGTH "${opening}" opening_length)
math(EXPR start "${start} + ${opening_length}")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "\n${fence}\n" end)
if(end EQUAL -1)
    message(FATAL_ERROR "README.md's first ${fence}cpp block does not end")
endif()
math(EXPR end "${end} + 1")
string(SUBSTRING "${rest}" 0 ${end} block)
if(NOT block STREQUAL example)
    file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/readme_quick_start.cpp "${block}")
    message(FATAL_ERROR "README.md's first ${fence}cpp block is not examples/quick_start.cpp to "
                        "the letter: diff ${CMAKE_CURRENT_BINARY_DIR}/readme_quick_start.cpp "
                        "(the block) with it")
endif()
string(LENGTH "${example}" length)
message(STATUS "README.md quotes examples/quick_start.cpp whole (${length} bytes)")
