// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the heat-world reader given arbitrary bytes must either reject them with a
// world_format_error or return a valid world that survives writing and reading back.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "world.hpp"
#include "world_arrays.hpp"
#include "world_io.hpp"

namespace {

[[noreturn]] void broken(const char* what) {
    std::fprintf(stderr, "heat_world_reader_fuzz: %s\n", what);
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace kiln::heat;
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);

    world w;
    std::string message;
    try {
        w = read_world(bytes);
    } catch (const world_format_error& e) {
        message = e.what();
        if (message.empty() || message.find('\n') != std::string::npos)
            broken("error message is not one line");
    }

    // The stream reader must agree with the bytes reader, error message included.
    std::istringstream stream{std::string(bytes)};
    try {
        const world from_stream = read_world(stream);
        if (!message.empty() || from_stream != w) broken("stream and bytes readers disagree");
    } catch (const world_format_error& e) {
        if (message != e.what()) broken("stream and bytes readers give different errors");
    }
    // So must the file reader, which sizes the arrays by the file's size and reads them whole,
    // serially and in parallel chunks (pread; any size of array once parallel_from_cells is 0).
    const int file = memfd_create("heat_world_reader_fuzz", MFD_CLOEXEC);
    if (file < 0 || write(file, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
        broken("cannot make an in-memory file");
    for (const std::size_t parallel_from_cells : {parallel_read_cells, std::size_t{0}}) {
        if (lseek(file, 0, SEEK_SET) != 0) broken("cannot rewind the in-memory file");
        try {
            const world from_file = read_world(file, "a file", parallel_from_cells);
            if (!message.empty() || from_file != w) broken("file and bytes readers disagree");
        } catch (const world_format_error& e) {
            if (message != e.what()) broken("file and bytes readers give different errors");
        }
    }
    // So must step_world_mpi's ranks, which read a file laid out as written each their own rows
    // (here two parts, split at the middle row): the same world, or the first of their errors
    // in the file's order is the same message.
    try {
        if (const auto layout = read_binary_layout(file, "a file")) {
            if (8 * layout->cells() > size) broken("a layout larger than its file");
            world parts;
            parts.width = layout->width;
            parts.height = layout->height;
            parts.alpha = layout->alpha;
            parts.flags.resize(layout->cells());
            parts.temperatures.resize(layout->cells());
            const std::size_t split = std::size_t{layout->height / 2} * layout->width;
            std::string first_error;
            std::uint64_t first_position = 0;
            for (const auto& [first, count] :
                 {std::pair{std::size_t{0}, split}, std::pair{split, layout->cells() - split}}) {
                const auto array = [&](std::uint64_t offset) {
                    return array_in_file{.fd = file,
                                         .shown = "a file",
                                         .file_offset = offset,
                                         .input_offset = offset,
                                         .cells = layout->cells(),
                                         .width = layout->width};
                };
                try {
                    read_cells(array(layout->flags_offset), first,
                               std::span(parts.flags).subspan(first, count));
                    read_cells(array(layout->temperatures_offset), first,
                               std::span(parts.temperatures).subspan(first, count));
                } catch (const world_format_error& e) {
                    if (first_error.empty() || e.position() < first_position) {
                        first_error = e.what();
                        first_position = e.position();
                    }
                }
            }
            if (first_error != message || (message.empty() && parts != w))
                broken("rows read in parts and the bytes reader disagree");
        }
    } catch (const world_format_error& e) {
        if (message != e.what())
            broken("the layout reader and the bytes reader give different errors");
    }
    close(file);
    if (!message.empty()) return 0;

    check_world(w);  // an accepted world must keep every invariant; throwing here is a finding

    // Both formats store alpha as printf("%g") text, as the original did, so alpha may change
    // once on the first write (666666960.1 becomes 6.66667e+08) and must be stable after that.
    // Binary temperatures are stored exactly; text ones with 8 decimals, again stable after
    // one write.
    const std::string binary = world_to_string(w, world_format::binary);
    const world from_binary = read_world(binary);
    if (from_binary.flags != w.flags ||
        std::memcmp(from_binary.temperatures.data(), w.temperatures.data(),
                    w.temperatures.size() * sizeof(float)) != 0 ||
        world_to_string(from_binary, world_format::binary) != binary) {
        broken("binary round trip changed the world");
    }
    const std::string text = world_to_string(w, world_format::text);
    const world from_text = read_world(text);
    if (from_text.flags != w.flags || world_to_string(from_text, world_format::text) != text) {
        broken("text round trip changed the world");
    }
    return 0;
}
