// SPDX-License-Identifier: Apache-2.0
// kiln-prof: draws a KILN_PROFILE trace as a timeline (SVG, or a self-contained HTML page): one
// lane per device queue and host thread, events coloured by kind, and the top kernels.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "atomic_file.hpp"
#include "kiln_prof_draw.hpp"
#include "program_main.hpp"

namespace {

void print_usage() {
    std::cout
        << "usage: kiln-prof TRACE.json -o OUTPUT.svg|OUTPUT.html|-\n"
           "Draws a trace written by KILN_PROFILE=TRACE.json as a timeline: a lane per device\n"
           "queue and host thread, events coloured by kind (hover for details), and the top\n"
           "kernels by device time. .html gives a self-contained page, anything else an SVG;\n"
           "-o - writes the SVG to standard output. OUTPUT may not be the trace itself.\n";
}

/// Whether `output` names the file `input` names: the same path, a link to it, or a hard link.
/// The writer replaces the file a link points to, so comparing paths would not do.
bool same_file(const std::string& input, const std::string& output) {
    std::error_code missing;  // an output that does not exist yet is another file
    return std::filesystem::equivalent(input, output, missing);
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("kiln-prof", [&] {
        std::string input, output;
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            if (arg == "--help" || arg == "-h") {
                print_usage();
                return 0;
            }
            if (arg == "-o" && i + 1 < argc)
                output = argv[++i];
            else if (!arg.starts_with("-") && input.empty())
                input = arg;
            else
                throw std::invalid_argument("unexpected argument '" + arg + "' (try --help)");
        }
        if (input.empty() || output.empty())
            throw std::invalid_argument("needs a trace and -o OUTPUT (try --help)");
        const bool to_standard_output = output == "-";
        if (!to_standard_output && same_file(input, output))
            throw std::invalid_argument("-o '" + output + "' is the trace being drawn ('" + input +
                                        "'); the picture would replace it");
        std::ifstream in(input);
        if (!in) throw std::runtime_error("cannot read " + input);
        kiln::programs::now_doing("reading and drawing the trace");
        const kiln::prof::picture picture =
            kiln::prof::draw_trace(in, input,
                                   output.ends_with(".html") ? kiln::prof::picture_format::html
                                                             : kiln::prof::picture_format::svg);
        if (to_standard_output) {
            std::cout << picture.text;  // run_program reports it if it cannot be written
            return 0;
        }
        kiln::programs::write_file(output, picture.text.data(), picture.text.size());
        std::cout << "kiln-prof: " << output << ": " << picture.lanes << " lanes, "
                  << picture.kernels << " kernels\n";
        return 0;
    });
}
