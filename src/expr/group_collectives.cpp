// Work-group reduce and scan generators: the local-memory path.
#include <kiln/detail/group_collectives.hpp>

namespace kiln::detail {

void group_collectives::reduce_in_place(std::string_view scratch, std::string_view lid,
                                        std::string_view size, const combine_text& combine) {
    const std::string s(scratch), i(lid);
    builder_.local_barrier();
    builder_.open("for (uint stride = " + std::string(size) + " / 2; stride > 0; stride /= 2)");
    builder_.line("if (" + i + " < stride) " + s + "[" + i +
                  "] = " + combine(s + "[" + i + "]", s + "[" + i + " + stride]") + ";");
    builder_.local_barrier();
    builder_.close();
}

void group_collectives::inclusive_scan(std::string_view scratch, std::string_view lid,
                                       std::string_view group_size, std::string_view type,
                                       std::string_view value, const combine_text& combine) {
    // Hillis-Steele: log2(group size) steps, each reading before any work-item writes.
    const std::string s(scratch), i(lid), v(value);
    builder_.line(s + "[" + i + "] = " + v + ";");
    builder_.local_barrier();
    builder_.open("for (uint kiln_d = 1; kiln_d < " + std::string(group_size) + "; kiln_d *= 2)");
    builder_.line(std::string(type) + " kiln_before = " + v + ";");
    builder_.line("if (" + i + " >= kiln_d) kiln_before = " + s + "[" + i + " - kiln_d];");
    builder_.local_barrier();
    builder_.open("if (" + i + " >= kiln_d)");
    builder_.line(v + " = " + combine("kiln_before", v) + ";");
    builder_.line(s + "[" + i + "] = " + v + ";");
    builder_.close();
    builder_.local_barrier();
    builder_.close();
}

}  // namespace kiln::detail
