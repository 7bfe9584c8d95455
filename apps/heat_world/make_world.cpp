// SPDX-License-Identifier: Apache-2.0
// make_world: writes the coursework's n x n test world to standard output.
#include <cstdio>
#include <iostream>

#include "program_main.hpp"
#include "tool_support.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace {

constexpr const char* usage = R"(usage: make_world [options] [n [alpha [binary]]]

Writes the n x n test world of the HPCE heat-world coursework to standard output: an insulating
border and walls, a heat source (fixed at 1) along row 1 and a heat sink (fixed at 0) at
(n/2, n-3), every other cell at temperature 0.

  n        side of the world, at least 3 (default 128)
  alpha    propagation constant, a number >= 0 (default 0.1)
  binary   0 writes HPCEHeatWorldV0 text, 1 writes HPCEHeatWorldV0Binary (default 0)

options:
  --stats  print the time taken and the rate on standard error
  --help   print this help
)";

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("make_world", [&] {
        using namespace kiln::heat;
        bool stats = false;
        std::vector<std::string> positional;
        for (argument_reader args(argc, argv); !args.done();) {
            if (args.flag("--help") || args.flag("-h")) {
                std::fputs(usage, stdout);
                return 0;
            } else if (args.flag("--stats")) {
                stats = true;
            } else {
                args.take_positional(positional);
            }
        }
        if (positional.size() > 3) {
            throw usage_error(
                "too many arguments: expected at most n, alpha and binary (try --help)");
        }
        const unsigned n = positional.size() > 0 ? parse_count(positional[0], "n") : 128;
        const float alpha =
            positional.size() > 1 ? parse_non_negative(positional[1], "alpha") : 0.1f;
        const bool binary = positional.size() > 2 && parse_binary_choice(positional[2]);
        if (n < 3) throw usage_error("n must be at least 3, got " + positional[0]);

        std::ios::sync_with_stdio(false);
        const stopwatch clock;
        kiln::programs::now_doing("building the world");
        const world w = make_test_world(n, alpha);
        const double build_seconds = clock.seconds();
        kiln::programs::now_doing("writing the world");
        write_world(std::cout, w, binary ? world_format::binary : world_format::text);
        kiln::programs::flush_standard_output();
        if (stats) {
            const double total = clock.seconds();
            std::fprintf(
                stderr,
                "make_world: %u x %u world (%zu cells), built in %.3f s, written in %.3f s (%.3g "
                "cells/s)\n",
                n, n, w.cell_count(), build_seconds, total - build_seconds,
                static_cast<double>(w.cell_count()) / std::max(total - build_seconds, 1e-9));
        }
        return 0;
    });
}
