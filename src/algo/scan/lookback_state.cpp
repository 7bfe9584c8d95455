// The look-back state's code (lookback_state.hpp).
#include "lookback_state.hpp"

#include <utility>

namespace kiln::detail {

lookback_state::lookback_state(const scan_operation& op, state_packing packing, arrays names)
    : op_(op), packing_(packing), names_(std::move(names)) {}

lookback_state lookback_state::for_tiles(const scan_operation& op) {
    return {op, op.packing, {"ulong", "kiln_state", "kiln_aggregates", "kiln_prefixes"}};
}

lookback_state lookback_state::for_chunks(const scan_operation& op) {
    return {op, state_packing::separate, {"uint", "kiln_flags", "kiln_totals", "kiln_prefixes"}};
}

void lookback_state::declare_pointer(source_builder& b,
                                     const scan_scratch_layout<ulong_text>& layout) const {
    b.line("global ulong* " + names_.states + " = (global ulong*)(kiln_temp + " +
           std::to_string(layout.states_offset()) + ");");
}

void lookback_state::publish(source_builder& b, const std::string& index, const std::string& value,
                             int flag) const {
    const std::string f = std::to_string(flag);
    const std::string word = "*(volatile global ulong*)&" + names_.states + "[" + index + "]";
    switch (packing_) {
        case state_packing::low_32_bits:
            b.line(word + " = ((ulong)" + f + " << 32) | as_uint(" + value + ");");
            return;
        case state_packing::count_62_bits:
            b.line(word + " = ((ulong)" + f + " << 62) | " + value + ";");
            return;
        case state_packing::pair_30_32_bits:
            b.line(word + " = ((ulong)" + f + " << 62) | ((ulong)" + value + ".x << 32) | " +
                   value + ".y;");
            return;
        case state_packing::separate:
            break;
    }
    b.line((flag == 1 ? names_.aggregates : names_.prefixes) + "[" + index + "] = " + value + ";");
    b.release_store(names_.word_type, "&" + names_.states + "[" + index + "]", f);
}

std::string lookback_state::load(const std::string& k) const {
    return "*(volatile global ulong*)&" + names_.states + "[" + k + "]";
}

std::string lookback_state::flag_of(const std::string& word) const {
    switch (packing_) {
        case state_packing::low_32_bits:
            return word + " >> 32";
        case state_packing::count_62_bits:
        case state_packing::pair_30_32_bits:
            return word + " >> 62";
        case state_packing::separate:
            break;
    }
    return word;
}

void lookback_state::read_value(source_builder& b, const std::string& k,
                                const std::string& word) const {
    const std::string& t = op_.value_type;
    switch (packing_) {
        case state_packing::low_32_bits:
            b.line("const " + t + " value = as_" + t + "((uint)" + word + ");");
            return;
        case state_packing::pair_30_32_bits:
            b.line(t + " value;");
            b.line("value.x = (uint)(" + word + " >> 32) & 0x3fffffffu;");
            b.line("value.y = (uint)" + word + ";");
            return;
        case state_packing::count_62_bits:
            b.line("const " + t + " value = " + word + " & (((ulong)1 << 62) - 1);");
            return;
        case state_packing::separate:
            break;
    }
    // Written before the flag, behind a fence: fence here too, then volatile loads, which
    // skip the non-coherent L1 of GPUs. Component by component: CUDA's vector types cannot
    // be copied from volatile memory.
    b.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    b.line(t + " value;");
    b.line("global " + t + "* kiln_source = flag == 2 ? &" + names_.prefixes + "[" + k + "] : &" +
           names_.aggregates + "[" + k + "];");
    if (op_.components == 1) {
        b.line("value = *(volatile global " + t + "*)kiln_source;");
        return;
    }
    const std::string scalar = t.substr(0, t.size() - 1);
    for (unsigned c = 0; c < op_.components; ++c)
        b.line(std::string("value.") + "xyzw"[c] + " = ((volatile global " + scalar +
               "*)kiln_source)[" + std::to_string(c) + "];");
}

void lookback_state::poll_until_published(source_builder& b, const std::string& k) const {
    b.open("do");
    b.line("word = " + load(k) + ";");
    b.line("flag = " + flag_of("word") + ";");
    b.close_with("while (flag == 0);");
}

void lookback_state::poll_while_unpublished(source_builder& b, const std::string& k) const {
    b.open("while (flag == 0)");
    b.line("word = " + load(k) + ";");
    b.line("flag = " + flag_of("word") + ";");
    b.close();
}

void lookback_state::acquire_until_published(source_builder& b, const std::string& k) const {
    b.open("do");
    b.acquire_load(names_.word_type, "&" + names_.states + "[" + k + "]", "flag");
    b.close_with("while (flag == 0);");
}

std::string lookback_state::published_value(const std::string& k) const {
    return "flag == 2 ? " + names_.prefixes + "[" + k + "] : " + names_.aggregates + "[" + k + "]";
}

}  // namespace kiln::detail
