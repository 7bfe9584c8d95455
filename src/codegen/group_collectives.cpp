// SPDX-License-Identifier: Apache-2.0
// Work-group reduce and scan generators: the local-memory path and the sub-group path.
#include <kiln/detail/group_collectives.hpp>

#include "codegen/device_vocabulary.hpp"

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
                                              const combine_text& combine, std::string_view type,
                                              unsigned components) {
    if (sub_group_size_ > 0)
        return sub_group_scan(std::string(scratch), std::string(lid), std::string(group_size),
                              std::string(value), combine, std::string(type), components);
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

std::string group_collectives::sub_group_scan(const std::string& scratch, const std::string& lid,
                                              const std::string& group_size,
                                              const std::string& value, const combine_text& combine,
                                              const std::string& type, unsigned components) {
    // Kogge-Stone within each sub-group: at step d every lane combines the value d lanes below
    // it (the earlier operand) into its own. Lanes past a partial tile's end only ever feed
    // higher lanes, so no identity is needed, as on the local-memory path.
    const std::string sg = std::to_string(sub_group_size_), s = scratch, v = value;
    builder_.line("const uint kiln_lane = " + lid + " % " + sg + ";");
    builder_.line("const uint kiln_sub_group = " + lid + " / " + sg + ";");
    builder_.open("for (uint kiln_d = 1; kiln_d < " + sg + "; kiln_d *= 2)");
    declare_shuffled(true, type, "kiln_below", v, "kiln_d", components);
    builder_.line("if (kiln_lane >= kiln_d) " + v + " = " + combine("kiln_below", v) + ";");
    builder_.close();
    // Sub-group totals after the results' half; each work-item folds those before its own.
    builder_.line("if (kiln_lane == " + sg + " - 1) " + s + "[" + group_size +
                  " + kiln_sub_group] = " + v + ";");
    builder_.local_barrier();
    builder_.open("if (kiln_sub_group > 0)");
    builder_.line(type + " kiln_before = " + s + "[" + group_size + "];");
    builder_.line("for (uint kiln_w = 1; kiln_w < kiln_sub_group; ++kiln_w) kiln_before = " +
                  combine("kiln_before", s + "[" + group_size + " + kiln_w]") + ";");
    builder_.line(v + " = " + combine("kiln_before", v) + ";");
    builder_.close();
    builder_.line(s + "[" + lid + "] = " + v + ";");
    builder_.local_barrier();
    return "0";
}

void group_collectives::shuffle_down(const std::string& type, const std::string& target,
                                     const std::string& value, const std::string& delta,
                                     unsigned components) {
    declare_shuffled(false, type, target, value, delta, components);
}

void group_collectives::declare_shuffled(bool up, const std::string& type,
                                         const std::string& target, const std::string& value,
                                         const std::string& delta, unsigned components) {
    if (components == 1) {
        builder_.line(type + " " + target + " = " + shuffle(up, type, value, delta) + ";");
        return;
    }
    builder_.line(type + " " + target + ";");
    const std::string scalar = type.substr(0, type.find_first_of("0123456789"));
    for (unsigned c = 0; c < components; ++c) {
        const std::string part = std::string(".") + "xyzw"[c];
        builder_.line(target + part + " = " + shuffle(up, scalar, value + part, delta) + ";");
    }
}

std::string group_collectives::ballot(const std::string& predicate) {
    use_device_vocabulary(builder_, target_);
    return "kiln_ballot((uint)(" + predicate + "))";
}

std::string group_collectives::shuffle(bool up, const std::string& type, const std::string& value,
                                       const std::string& delta) {
    use_device_vocabulary(builder_, target_);
    const std::string call = std::string("kiln_shuffle_") + (up ? "up" : "down");
    if (type == "long" || type == "ulong" || type == "double")
        return "as_" + type + "(" + call + "_64(as_ulong(" + value + "), " + delta + "))";
    if (type == "int" || type == "uint" || type == "float")
        return "as_" + type + "(" + call + "(as_uint(" + value + "), " + delta + "))";
    // Narrower integers travel widened, as warp shuffles know only 32 and 64 bits.
    return "(" + type + ")" + call + "((uint)(" + value + "), " + delta + ")";
}

}  // namespace kiln::detail
