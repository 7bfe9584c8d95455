// SPDX-License-Identifier: Apache-2.0
// reduce_by_key's loops in the chunk kernels (scan_chunks.hpp): plain run counting and value
// combining, rather than the generic scatter loops' (runs, value) pairs, which the look-back
// between chunks still carries.
#include "reduce_by_key_chunks.hpp"

#include <utility>

namespace kiln::detail {
namespace {

/// Element idx's value as kiln_x, its key as kiln_key and kiln_head, 1 where `head`.
void element_values(source_builder& b, const reduce_by_key_input& input, const std::string& head) {
    for (const auto& statement : input.value.statements) b.line(statement);
    b.line("const " + input.value_type + " kiln_x = " + input.value.value + ";");
    b.line("const " + input.key_type + " kiln_key = " + input.key + ";");
    b.line("const uint kiln_head = " + head + ";");
    b.line("kiln_previous = kiln_key;");
}

}  // namespace

std::string run_loops::head_at(source_builder& b, const reduce_by_key_input& input,
                               const std::string& at) {
    for (const auto& [name, offset] : {std::pair{"kiln_key_before", " - 1"}, {"kiln_key_at", ""}}) {
        b.line(input.key_type + " " + name + ";");
        b.open("");
        b.line("const ulong idx = " + at + offset + ";");
        for (const auto& statement : input.value.statements) b.line(statement);
        b.line(std::string(name) + " = " + input.key + ";");
        b.close();
    }
    return "(kiln_key_at != kiln_key_before)";
}

void run_loops::reduce(source_builder& b, const reduce_by_key_input& input) const {
    // Defines kiln_segment, which makes the chunk's pair, whichever kernel comes first.
    pairs_.combine(b, "kiln_open", "kiln_open");
    // A block of its own, since the chained kernel runs finish's loops in the same scope.
    b.line(pairs_.value_type + " kiln_chunk_total;");
    b.open("");
    runs_and_open(b, input);
    b.line("kiln_chunk_total = kiln_segment(kiln_runs, kiln_open);");
    b.close();
}

/// The heads are counted by comparing each key with the one before, read again rather than
/// carried, so that the count has no chain but the sum and the compiler may walk it by vectors;
/// the open value is summed from the last head, found by walking back from the chunk's end.
void run_loops::runs_and_open(source_builder& b, const reduce_by_key_input& input) const {
    first_head(b, input);
    count_heads(b, input, "begin + 1");
    b.line("ulong kiln_last = end - 1;");
    b.open("for (; kiln_last > begin; --kiln_last)");
    b.line("if (" + head_at(b, input, "kiln_last") + ") break;");
    b.close();
    b.line(input.value_type + " kiln_open;");
    open_from(b, input, "kiln_last");
}

void run_loops::first_head(source_builder& b, const reduce_by_key_input& input) const {
    b.line("ulong kiln_runs;");
    b.open("");
    b.line("const ulong idx = begin;");
    for (const auto& statement : input.value.statements) b.line(statement);
    b.line("kiln_runs = (" + input.head + ") != 0;");
    b.close();
}

void run_loops::open_from(source_builder& b, const reduce_by_key_input& input,
                          const std::string& from) const {
    b.open("for (ulong idx = " + from + "; idx < " + from + " + 1; ++idx)");
    for (const auto& statement : input.value.statements) b.line(statement);
    b.line("kiln_open = " + input.value.value + ";");
    b.close();
    b.open("for (ulong idx = " + from + " + 1; idx < end; ++idx)");
    for (const auto& statement : input.value.statements) b.line(statement);
    b.line("kiln_open = " + combine(b, "kiln_open", input.value.value) + ";");
    b.close();
}

void run_loops::count_heads(source_builder& b, const reduce_by_key_input& input,
                            const std::string& from) const {
    b.open("for (ulong kiln_i = " + from + "; kiln_i < end; ++kiln_i)");
    b.line("kiln_runs += " + head_at(b, input, "kiln_i") + ";");
    b.close();
}

void run_loops::finish(source_builder& b, const reduce_by_key_input& input) const {
    open_runs(b, input);
    run_elements(b, input, "begin + 1");
    close_runs(b);
}

void run_loops::open_runs(source_builder& b, const reduce_by_key_input& input) const {
    const std::string v = input.value_type;
    b.line("ulong kiln_runs = have ? (ulong)prefix.x : 0;");
    b.line(v + " kiln_open = as_" + v + "(prefix.y);");
    b.line("int kiln_had = have;");
    b.line(input.key_type + " kiln_previous;");
    b.open("for (ulong idx = begin; idx < begin + 1; ++idx)");
    element_values(b, input, "(" + input.head + ") != 0");
    run_step(b);
    b.close();
}

void run_loops::run_elements(source_builder& b, const reduce_by_key_input& input,
                             const std::string& from) const {
    b.open("for (ulong idx = " + from + "; idx < end; ++idx)");
    element_values(b, input, "kiln_key != kiln_previous");
    run_step(b);
    b.close();
}

void run_loops::run_step(source_builder& b) const {
    const std::string keys = run_outputs::keys, values = run_outputs::values,
                      capacity = run_outputs::capacity, base = run_outputs::run_base;
    b.open("if (kiln_head)");
    b.line("if (kiln_runs < " + capacity + ") " + keys + "[kiln_runs - " + base + "] = kiln_key;");
    b.line("if (kiln_had && kiln_runs - 1 < " + capacity + ") " + values + "[kiln_runs - 1 - " +
           base + "] = kiln_open;");
    b.line("++kiln_runs;");
    b.line("kiln_open = kiln_x;");
    b.close();
    b.open("else");
    b.line("kiln_open = " + combine(b, "kiln_open", "kiln_x") + ";");
    b.close();
    b.line("kiln_had = 1;");
}

void run_loops::close_runs(source_builder& b) const {
    const std::string values = run_outputs::values, capacity = run_outputs::capacity,
                      base = run_outputs::run_base;
    b.open("if (end == n && kiln_runs - 1 < " + capacity + ")");
    b.line(values + "[kiln_runs - 1 - " + base + "] = kiln_open;");
    b.close();
}

std::string reduce_by_key_chunk_program_source(const scan_operation& pairs,
                                               const value_combine& combine,
                                               const declare_input<reduce_by_key_input>& input,
                                               std::size_t chunk, scan_schedule schedule) {
    return chunk_program_source(pairs, input, chunk, schedule, run_loops(pairs, combine));
}

}  // namespace kiln::detail
