// SPDX-License-Identifier: Apache-2.0
// One process of runtime.cache_processes (cache_processes_test.cpp): builds the programs its
// arguments name into KILN_CACHE_DIR while other processes build the same ones, runs each, then
// builds each again from the disk cache, whose entries the others may still be replacing.
// Exits 0 when every program ran right and every entry it read was whole; otherwise prints why
// and exits 1.
#include <cstdlib>
#include <exception>
#include <iostream>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

/// Program p of the run `token`: every process given the token builds the same text.
std::string source_of(const std::string& token, int p) {
    return "// " + token + " program " + std::to_string(p) +
           "\n"
           "kernel void fill_with(global int* out, uint n) {\n"
           "    size_t i = get_global_id(0);\n"
           "    if (i < n) out[i] = " +
           std::to_string(p + 1) +
           ";\n"
           "}\n";
}

bool runs_right(const kiln::program& prog, const kiln::queue& q, int p) {
    kiln::buffer<int> out(q, std::vector<int>(64, 0));
    return out.read(q, prog.kernel("fill_with")(out, 64u).launch(q, {64})) ==
           std::vector<int>(64, p + 1);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: cache_builder TOKEN PROGRAMS\n";
        return 2;
    }
    const std::string token = argv[1];
    const int programs = std::atoi(argv[2]);
    try {
        const kiln::device dev = kiln::devices().at(0);
        const kiln::queue q(dev);
        std::string failures;
        for (const bool from_disk : {false, true}) {
            kiln::program_cache::clear_memory();
            for (int p = 0; p < programs; ++p) {
                const kiln::program prog(dev, source_of(token, p));
                if (from_disk && prog.origin() != kiln::program_origin::disk_cache)
                    failures += "program " + std::to_string(p) + " was not loaded from disk\n";
                if (!runs_right(prog, q, p))
                    failures += "program " + std::to_string(p) + " gave wrong values\n";
            }
        }
        const auto stats = kiln::program_cache::stats();
        if (stats.disk_rejected != 0)
            failures += std::to_string(stats.disk_rejected) + " entries read were refused\n";
        if (stats.disk_write_failures != 0)
            failures += std::to_string(stats.disk_write_failures) + " entries were not written\n";
        if (!failures.empty()) {
            std::cerr << "cache_builder " << token << ":\n" << failures;
            return 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "cache_builder " << token << ": " << e.what() << "\n";
        return 1;
    }
    return 0;
}
