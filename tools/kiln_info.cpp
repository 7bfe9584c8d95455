// SPDX-License-Identifier: Apache-2.0
// kiln-info: lists every device kiln sees, with its properties, and marks the default.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/kiln.hpp>
#include <stdexcept>
#include <string>

#include "program_main.hpp"

namespace {

void print_usage() {
    std::cout
        << "usage: kiln-info [--json] [--help]\n"
           "Lists every OpenCL and CUDA device kiln can use, with the properties portable code\n"
           "needs, and marks the default device (KILN_DEVICE overrides it, e.g. gpu, cpu,\n"
           "cuda, nvidia, 0). Exits with status 1, with the reason on standard error, when there\n"
           "is no default device: no device at all, or a KILN_DEVICE that matches none.\n"
           "  --json   one JSON object: {\"default\": index, \"devices\": [...]}\n";
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("kiln-info", [&] {
        bool json = false;
        for (int i = 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--json") == 0) {
                json = true;
            } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
                print_usage();
                return 0;
            } else {
                throw std::invalid_argument("unknown argument '" + std::string(argv[i]) +
                                            "' (try --help)");
            }
        }
        const auto& all = kiln::devices();
        long default_index = -1;
        std::string default_problem;
        try {
            default_index = static_cast<long>(kiln::default_device().index());
        } catch (const kiln::error& e) {
            default_problem = e.what();
        }
        if (json) {
            std::cout << "{\"default\": " << default_index << ", \"devices\": [";
            for (std::size_t i = 0; i < all.size(); ++i)
                std::cout << (i ? ", " : "") << all[i].to_json();
            std::cout << "]}\n";
        } else {
            if (all.empty()) std::cout << "No devices found.\n";
            for (const auto& dev : all) {
                std::cout << "[" << dev.index() << "]"
                          << (static_cast<long>(dev.index()) == default_index ? " (default) " : " ")
                          << dev.summary() << "\n";
            }
        }
        if (!default_problem.empty()) {
            // kiln-info is how users check their KILN_DEVICE: a choice that picks nothing is an
            // error, said after the list (so the list comes first on a terminal).
            kiln::programs::flush_standard_output();
            const char* spec = std::getenv("KILN_DEVICE");
            const std::string choice =
                spec != nullptr && *spec != '\0'
                    ? "KILN_DEVICE=\"" + std::string(spec) + "\" matches no device, so there is "
                    : "there is ";
            throw std::runtime_error(choice + "no default device: " + default_problem);
        }
        return 0;
    });
}
