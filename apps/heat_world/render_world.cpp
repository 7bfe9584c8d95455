// SPDX-License-Identifier: Apache-2.0
// render_world: reads a heat world on standard input and writes it as a BMP or PNG picture.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "atomic_file.hpp"
#include "program_main.hpp"
#include "render.hpp"
#include "tool_support.hpp"
#include "world.hpp"
#include "world_io.hpp"

namespace {

constexpr const char* usage = R"(usage: render_world [options] [file|-]

Reads a heat world (HPCEHeatWorldV0 text or binary) on standard input and draws it: insulators
green, every other cell from blue (temperature 0) to red (temperature 1), y = 0 at the bottom.
Writes a 24-bit BMP to `file` (default -, standard output), or a PNG when `file` ends in .png.
An existing file is replaced only once the new picture is complete and on disk (a failed write
leaves it as it was); a device or a FIFO is written to as a stream.

options:
  --format bmp|png      picture format, whatever the file name says
  --original-padding    pad BMP rows as the original program did: (4 - width % 4) % 4 bytes,
                        byte-identical to its files, but not a valid BMP for odd widths
  --stats               print the time taken on standard error
  --help                print this help
)";

bool ends_with_png(const std::string& name) {
    if (name.size() < 4) return false;
    std::string tail = name.substr(name.size() - 4);
    for (char& c : tail) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return tail == ".png";
}

}  // namespace

int main(int argc, char** argv) {
    return kiln::programs::run_program("render_world", [&] {
        using namespace kiln::heat;
        bool stats = false;
        bmp_padding padding = bmp_padding::standard;
        std::optional<std::string> format;
        std::vector<std::string> positional;
        for (argument_reader args(argc, argv); !args.done();) {
            if (args.flag("--help") || args.flag("-h")) {
                std::fputs(usage, stdout);
                return 0;
            } else if (args.flag("--stats")) {
                stats = true;
            } else if (args.flag("--original-padding")) {
                padding = bmp_padding::original;
            } else if (auto value = args.option("--format")) {
                if (*value != "bmp" && *value != "png") {
                    throw usage_error("--format must be bmp or png, got '" + *value + "'");
                }
                format = *value;
            } else {
                args.take_positional(positional);
            }
        }
        if (positional.size() > 1)
            throw usage_error("too many arguments: expected one file name (try --help)");
        const std::string destination = positional.empty() ? "-" : positional[0];
        if (destination.empty()) throw usage_error("the file name is empty");
        const bool png = format ? *format == "png" : ends_with_png(destination);
        if (png && !png_supported()) {
            throw std::runtime_error("this build has no PNG support (libpng was not found)");
        }

        std::ios::sync_with_stdio(false);
        const stopwatch clock;
        kiln::programs::now_doing("reading the world");
        world w;
        try {
            w = read_world(STDIN_FILENO, "standard input");
        } catch (const world_format_error& e) {
            throw std::runtime_error(std::string("bad world on standard input: ") + e.what());
        }
        const double read_seconds = clock.seconds();
        kiln::programs::now_doing("encoding the picture");
        const std::vector<std::uint8_t> picture = png ? encode_png(w) : encode_bmp(w, padding);
        const double encode_seconds = clock.seconds() - read_seconds;
        kiln::programs::now_doing("writing the picture");
        if (destination == "-") {
            kiln::programs::flush_standard_output();
            kiln::programs::write_stream(STDOUT_FILENO, picture.data(), picture.size(),
                                         "standard output");
        } else {
            kiln::programs::write_file(destination, picture.data(), picture.size());
        }
        if (stats) {
            std::fprintf(stderr,
                         "render_world: %u x %u cells: read %.3f s, encoded %s in %.3f s (%.3g "
                         "cells/s), %zu bytes\n",
                         w.width, w.height, read_seconds, png ? "PNG" : "BMP", encode_seconds,
                         static_cast<double>(w.cell_count()) / std::max(encode_seconds, 1e-9),
                         picture.size());
        }
        return 0;
    });
}
