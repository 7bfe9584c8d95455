// SPDX-License-Identifier: Apache-2.0
// The look-back state's code (lookback_state.hpp).
#include "lookback_state.hpp"

#include <stdexcept>
#include <utility>

namespace kiln::detail {

lookback_state::lookback_state(std::string value_type, unsigned components, state_packing packing,
                               arrays names)
    : value_type_(std::move(value_type)),
      components_(components),
      packing_(packing),
      names_(std::move(names)) {}

lookback_state lookback_state::for_tiles(const scan_operation& op) {
    return {op.value_type,
            op.components,
            op.packing,
            {"ulong", "kiln_state", "kiln_aggregates", "kiln_prefixes"}};
}

lookback_state lookback_state::for_windows(const scan_operation& op) {
    return {op.value_type,
            op.components,
            op.packing,
            {"ulong", "kiln_window_state", "kiln_window_aggregates", "kiln_window_prefixes"}};
}

lookback_state lookback_state::for_chunks(const scan_operation& op) {
    return {op.value_type,
            op.components,
            state_packing::separate,
            {"uint", "kiln_flags", "kiln_totals", "kiln_prefixes"}};
}

lookback_state lookback_state::for_counts(std::string states) {
    return {"uint", 1, state_packing::count_30_bits, {"uint", std::move(states), "", ""}};
}

void lookback_state::declare_pointers(source_builder& b, const offsets& at) const {
    const std::string& w = names_.word_type;
    b.line("global " + w + "* " + names_.states + " = (global " + w + "*)(kiln_temp + " +
           at.states + ");");
    if (packing_ != state_packing::separate || at.aggregates.empty()) return;
    const std::string& t = value_type_;
    b.line("global " + t + "* " + names_.aggregates + " = (global " + t + "*)(kiln_temp + " +
           at.aggregates + ");");
    b.line("global " + t + "* " + names_.prefixes + " = (global " + t + "*)(kiln_temp + " +
           at.prefixes + ");");
}

std::string lookback_state::flag_bits(int flag) const {
    const std::string f = std::to_string(flag);
    switch (packing_) {
        case state_packing::low_32_bits:
            return "((ulong)" + f + " << 32)";
        case state_packing::count_62_bits:
        case state_packing::pair_30_32_bits:
            return "((ulong)" + f + " << 62)";
        case state_packing::count_30_bits:
            return flag == 2 ? "0x80000000u" : "0x40000000u";
        case state_packing::separate:
            break;
    }
    throw std::logic_error("lookback_state: values kept apart have no packed word");
}

std::string lookback_state::packed_value(const std::string& value) const {
    switch (packing_) {
        case state_packing::low_32_bits:
            return "as_uint(" + value + ")";
        case state_packing::count_62_bits:
            return value;
        case state_packing::pair_30_32_bits:
            return "((ulong)" + value + ".x << 32) | " + value + ".y";
        case state_packing::count_30_bits:
            return "(" + value + ")";
        case state_packing::separate:
            break;
    }
    throw std::logic_error("lookback_state: values kept apart have no packed word");
}

void lookback_state::publish(source_builder& b, const std::string& index, const std::string& value,
                             int flag) const {
    if (packing_ != state_packing::separate) {
        b.line(load(index) + " = " + flag_bits(flag) + " | " + packed_value(value) + ";");
        return;
    }
    b.line((flag == 1 ? names_.aggregates : names_.prefixes) + "[" + index + "] = " + value + ";");
    b.release_store(names_.word_type, "&" + names_.states + "[" + index + "]",
                    std::to_string(flag));
}

void lookback_state::publish_prefix_if(source_builder& b, const std::string& is_prefix,
                                       const std::string& index, const std::string& value) const {
    b.line(load(index) + " = (" + is_prefix + " ? " + flag_bits(2) + " : " + flag_bits(1) + ") | " +
           packed_value(value) + ";");
}

std::string lookback_state::load(const std::string& k) const {
    return "*(volatile global " + names_.word_type + "*)&" + names_.states + "[" + k + "]";
}

std::string lookback_state::flag_of(const std::string& word) const {
    switch (packing_) {
        case state_packing::low_32_bits:
            return word + " >> 32";
        case state_packing::count_62_bits:
        case state_packing::pair_30_32_bits:
            return word + " >> 62";
        case state_packing::count_30_bits:
            return word + " >> 30";
        case state_packing::separate:
            break;
    }
    return word;
}

std::string lookback_state::value_in(const std::string& word) const {
    switch (packing_) {
        case state_packing::low_32_bits:
            return "as_" + value_type_ + "((uint)" + word + ")";
        case state_packing::count_62_bits:
            return word + " & (((ulong)1 << 62) - 1)";
        case state_packing::count_30_bits:
            return word + " & 0x3fffffffu";
        case state_packing::pair_30_32_bits:
        case state_packing::separate:
            break;
    }
    throw std::logic_error("lookback_state: this value is not one expression of its word");
}

void lookback_state::read_value(source_builder& b, const std::string& k,
                                const std::string& word) const {
    const std::string& t = value_type_;
    switch (packing_) {
        case state_packing::low_32_bits:
        case state_packing::count_62_bits:
        case state_packing::count_30_bits:
            b.line("const " + t + " value = " + value_in(word) + ";");
            return;
        case state_packing::pair_30_32_bits:
            b.line(t + " value;");
            b.line("value.x = (uint)(" + word + " >> 32) & 0x3fffffffu;");
            b.line("value.y = (uint)" + word + ";");
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
    if (components_ == 1) {
        b.line("value = *(volatile global " + t + "*)kiln_source;");
        return;
    }
    const std::string scalar = t.substr(0, t.size() - 1);
    for (unsigned c = 0; c < components_; ++c)
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

void lookback_state::poll_until_prefix(source_builder& b, const std::string& k) const {
    b.open("while (flag != 2)");
    b.line("word = " + load(k) + ";");
    b.line("flag = " + flag_of("word") + ";");
    b.close();
}

void lookback_state::read_once_published(source_builder& b, const std::string& k,
                                         const std::string& first_read) const {
    const std::string& w = names_.word_type;
    b.line(w + " word = " + first_read + ";");
    b.line(w + " flag = " + flag_of("word") + ";");
    poll_while_unpublished(b, k);
    read_value(b, k, "word");
}

void lookback_state::walk_back(source_builder& b, const walk& w,
                               const std::function<void(const std::string& value)>& fold) const {
    const std::string& k = w.counter;
    b.open("for (" + w.counter_type + " " + k + " = " + w.from + "; " + k + " > 0;)");
    if (packing_ == state_packing::separate) {
        // The flag first, acquired, then the value it names.
        b.line("--" + k + ";");
        b.line(names_.word_type + " flag = 0;");
        acquire_until_published(b, w.index(k));
        b.line("const " + value_type_ + " earlier = " + published_value(w.index(k)) + ";");
        fold("earlier");
        b.line("if (flag == 2) break;");
    } else {
        // Flag and value in one word, read once per try: a word still 0 is read again. No
        // fence: nothing but the word is used, and a volatile access of an aligned word is one
        // access to the coherent level (L2). (Under CUDA a fence is __threadfence(), in the spin
        // loop of every reader: with fences the radix sort's single pass ran 2.6x slower than
        // under NVIDIA's OpenCL, H100 2026-11-22.)
        b.line("const " + names_.word_type + " word = " + load(w.index(k + " - 1")) + ";");
        b.open("if (word != 0)");
        fold(value_in("word"));
        b.line(k + " = (word & " + flag_bits(2) + ") ? 0 : " + k + " - 1;");
        b.close();
    }
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
