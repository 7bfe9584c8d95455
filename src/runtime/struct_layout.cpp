// SPDX-License-Identifier: Apache-2.0
// KILN_STRUCT declarations and the check of their layout against each device's compiler.
#include "runtime/struct_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <kiln/kernel_struct.hpp>
#include <kiln/runtime/buffer.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <mutex>
#include <sstream>

namespace kiln {
namespace detail {

namespace {

constexpr std::string_view layout_marker = "// kiln-layout ";

/// What a `// kiln-layout` line says about the host, and the declaration that follows it.
struct expected_layout {
    std::string name;
    std::size_t size = 0, alignment = 0;
    std::vector<std::pair<std::string, std::size_t>> offsets;
    std::string declaration;  ///< the typedef, without the marker
};

expected_layout parse_layout(const std::string& marker_line, std::string_view rest) {
    expected_layout layout;
    std::istringstream words(marker_line.substr(layout_marker.size()));
    std::string keyword;
    words >> layout.name >> keyword >> layout.size >> keyword >> layout.alignment >> keyword;
    std::string field;
    std::size_t offset = 0;
    while (words >> field >> offset) layout.offsets.emplace_back(field, offset);
    // The declaration ends with the line that closes the typedef.
    const std::string closing = "} " + layout.name + ";";
    const auto end = rest.find(closing);
    layout.declaration = std::string(
        rest.substr(0, end == std::string_view::npos ? rest.size() : end + closing.size()));
    return layout;
}

std::vector<expected_layout> layouts_in(const std::vector<std::string>& sources) {
    std::vector<expected_layout> found;
    for (const auto& source : sources) {
        std::size_t at = 0;
        while ((at = source.find(layout_marker, at)) != std::string::npos) {
            const std::size_t line_end = std::min(source.find('\n', at), source.size());
            const std::string line = source.substr(at, line_end - at);
            auto layout = parse_layout(line, std::string_view(source).substr(line_end));
            if (std::none_of(found.begin(), found.end(), [&](const expected_layout& l) {
                    return l.declaration == layout.declaration;
                }))
                found.push_back(std::move(layout));
            at = line_end;
        }
    }
    return found;
}

/// A kernel that writes what the device's compiler made of the declaration: size, alignment
/// (the offset of the struct after a char), then each field's offset. Only sizeof and pointer
/// differences, which every OpenCL C compiler and kiln's CUDA translation understand.
std::string probe_source(const expected_layout& layout) {
    const std::string& s = layout.name;
    std::string source = layout.declaration + "\n" + "typedef struct { char c; " + s +
                         " value; } kiln_alignment_probe;\n\n" +
                         "kernel void kiln_layout_probe(global ulong* out) {\n" +
                         "    if (get_global_id(0) != 0) return;\n    " + s +
                         " value;\n    kiln_alignment_probe padded;\n" + "    out[0] = sizeof(" +
                         s + ");\n" +
                         "    out[1] = (ulong)((char*)&padded.value - (char*)&padded);\n";
    for (std::size_t i = 0; i < layout.offsets.size(); ++i)
        source += "    out[" + std::to_string(i + 2) + "] = (ulong)((char*)&value." +
                  layout.offsets[i].first + " - (char*)&value);\n";
    return source + "}\n";
}

std::string mismatch(const expected_layout& layout, const device& dev,
                     const std::vector<std::uint64_t>& found) {
    const std::string where = " on device '" + dev.properties().name + "'";
    for (std::size_t i = 0; i < layout.offsets.size(); ++i)
        if (found[i + 2] != layout.offsets[i].second)
            return "struct " + layout.name + ": field '" + layout.offsets[i].first +
                   "' is at byte " + std::to_string(found[i + 2]) + where + " but at byte " +
                   std::to_string(layout.offsets[i].second) + " on the host";
    if (found[0] != layout.size)
        return "struct " + layout.name + " is " + std::to_string(found[0]) + " bytes" + where +
               " but " + std::to_string(layout.size) + " on the host";
    if (found[1] != layout.alignment)
        return "struct " + layout.name + " is aligned to " + std::to_string(found[1]) + " bytes" +
               where + " but to " + std::to_string(layout.alignment) + " on the host";
    return {};
}

void check_layout(const device& dev, const expected_layout& layout) {
    // Checked once per device and declaration for the life of the process.
    static std::mutex mutex;
    static std::vector<std::pair<device, std::string>> checked;
    {
        std::lock_guard lock(mutex);
        for (const auto& [d, declaration] : checked)
            if (d == dev && declaration == layout.declaration) return;
    }
    // The probe's source holds no marker, so building it checks nothing.
    kiln::program probe(dev, probe_source(layout));
    kiln::queue q(dev);
    buffer<std::uint64_t> out(q, layout.offsets.size() + 2);
    probe.kernel("kiln_layout_probe")(out).launch(q, range(1));
    const auto found = out.read(q);
    if (std::string why = mismatch(layout, dev, found); !why.empty())
        throw error("kiln::program", 0, "KILN_STRUCT_LAYOUT_MISMATCH",
                    why + " (the OpenCL C declaration and the C++ struct disagree)");
    std::lock_guard lock(mutex);
    checked.emplace_back(dev, layout.declaration);
}

}  // namespace

std::string struct_declaration(std::string_view name, std::size_t size, std::size_t alignment,
                               const std::vector<struct_field>& fields) {
    std::string marker = std::string(layout_marker) + std::string(name) + " size " +
                         std::to_string(size) + " align " + std::to_string(alignment) + " fields";
    std::string body = "typedef struct " + std::string(name) + " {\n";
    bool uses_double = false;
    for (const auto& field : fields) {
        marker += " " + std::string(field.name) + " " + std::to_string(field.offset);
        body += "    " + field.opencl_type + " " + field.name + ";\n";
        uses_double = uses_double || field.opencl_type.starts_with("double");
    }
    body += "} " + std::string(name) + ";\n";
    // Programs that never name double themselves still need fp64 for the struct's fields.
    const std::string pragma = uses_double ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "";
    return pragma + marker + "\n" + body;
}

void check_struct_layouts(const device& dev, const std::vector<std::string>& sources) {
    for (const auto& layout : layouts_in(sources)) check_layout(dev, layout);
}

}  // namespace detail
}  // namespace kiln
