// SPDX-License-Identifier: Apache-2.0
// This thread's determinism mode: the scoped guards' stack, over KILN_DETERMINISM.
#include <cstdlib>
#include <kiln/error.hpp>
#include <kiln/runtime/determinism.hpp>
#include <string>
#include <string_view>

namespace kiln {
namespace {

thread_local std::optional<determinism> scoped_mode;

determinism environment_mode() {
    const char* text = std::getenv("KILN_DETERMINISM");
    if (text == nullptr || *text == '\0' || std::string_view(text) == "run_to_run")
        return determinism::run_to_run;
    if (std::string_view(text) == "reproducible") return determinism::reproducible;
    throw invalid_argument_error(
        "kiln::current_determinism",
        "KILN_DETERMINISM is '" + std::string(text) + "'; it takes run_to_run or reproducible");
}

}  // namespace

determinism current_determinism() {
    if (scoped_mode) return *scoped_mode;
    // Read once: a program's mode does not change under it. A bad value throws on every call,
    // since a function-local static whose initialiser throws is tried again.
    static const determinism from_environment = environment_mode();
    return from_environment;
}

scoped_determinism::scoped_determinism(determinism mode) : previous_(scoped_mode) {
    scoped_mode = mode;
}

scoped_determinism::~scoped_determinism() {
    scoped_mode = previous_;
}

}  // namespace kiln
