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

std::string group_collectives::inclusive_scan(std::string_view scratch, std::string_view lid,
                                              std::string_view group_size, std::string_view value,
                                              const combine_text& combine) {
    // Hillis-Steele: log2(group size) steps, each reading one half of the scratch and writing
    // the other, so one barrier per step suffices.
    const std::string s(scratch), i(lid), v(value), n(group_size);
    builder_.line(s + "[" + i + "] = " + v + ";");
    builder_.local_barrier();
    builder_.line("uint kiln_from = 0;");
    builder_.open("for (uint kiln_d = 1; kiln_d < " + n + "; kiln_d *= 2)");
    builder_.line("if (" + i + " >= kiln_d) " + v + " = " +
                  combine(s + "[kiln_from + " + i + " - kiln_d]", v) + ";");
    builder_.line("kiln_from = " + n + " - kiln_from;");
    builder_.line(s + "[kiln_from + " + i + "] = " + v + ";");
    builder_.local_barrier();
    builder_.close();
    return "kiln_from";
}

}  // namespace kiln::detail
