// SPDX-License-Identifier: Apache-2.0
// Stream compaction's chunk loops without branches (scan_chunks.hpp,
// scan_policy::chunk_cursor_writes).
//
// Element by element, compaction branches on each element's flag, and where the flags follow no
// pattern (copy_if keeping half of random values) the core mispredicts every other element. Here
// every element is written at the chunk's cursor, which then advances by its flag: a rejected
// element is written where the next kept one will be, and overwritten by it. Past the chunk's
// last kept element such writes would land on the next chunk's first results, which another
// work-item writes, so the loop stops there: a walk back from the chunk's end finds it.
#include <kiln/detail/algo/scan_chunks.hpp>

#include "scan_chunk_writer.hpp"

namespace kiln::detail {
namespace {

class cursor_loops final : public chunk_loops<compaction_input> {
  public:
    explicit cursor_loops(const scan_operation& count) : t_(count.value_type) {}

    bool writes_out() const override { return false; }

    void reduce(source_builder& b, const compaction_input& input) const override {
        b.line(t_ + " kiln_chunk_total = 0;");
        b.open("for (ulong idx = begin; idx < end; ++idx)");
        for (const auto& statement : input.keep.statements) b.line(statement);
        b.line("kiln_chunk_total += " + input.keep.value + ";");
        b.close();
    }

    void finish(source_builder& b, const compaction_input& input) const override {
        const std::string capacity = compaction_outputs::capacity;
        b.line("ulong kiln_last = end;");
        b.open("for (; kiln_last > begin; --kiln_last)");
        b.line("const ulong idx = kiln_last - 1;");
        for (const auto& statement : input.keep.statements) b.line(statement);
        b.line("if (" + input.keep.value + ") break;");
        b.close();
        // The part's results start at its own output's first element (carry counts the parts
        // before), in the count type: 32 bits where the sizes allow.
        b.line(t_ + " kiln_cursor = (have ? prefix : 0) - carry;");
        // By groups of `group` elements while all of their writes fit below the capacity, so
        // that the check, the loop's test and its branch come once per group; the elements after
        // the last whole group, or once the capacity is near, one by one behind the check.
        b.line("ulong kiln_at = begin;");
        b.open("for (; kiln_last - kiln_at >= " + std::to_string(group) + " && kiln_cursor + " +
               std::to_string(group) + "UL <= " + capacity +
               "; kiln_at += " + std::to_string(group) + ")");
        for (std::size_t j = 0; j < group; ++j) {
            b.open("");
            b.line("const ulong idx = kiln_at + " + std::to_string(j) + ";");
            write_at_cursor(b, input, "");
            b.close();
        }
        b.close();
        b.open("for (ulong idx = kiln_at; idx < kiln_last; ++idx)");
        write_at_cursor(b, input, "if (kiln_cursor < " + capacity + ") ");
        b.close();
    }

  private:
    /// Elements per group of the cursor loop.
    static constexpr std::size_t group = 8;

    /// Writes element idx at the cursor (behind `guard`) and advances the cursor by its flag.
    void write_at_cursor(source_builder& b, const compaction_input& input,
                         const std::string& guard) const {
        for (const auto& statement : input.keep.statements) b.line(statement);
        b.line("const " + t_ + " kiln_keep = " + input.keep.value + ";");
        b.line(guard + compaction_outputs::out + std::string("[kiln_cursor] = ") +
               input.kept_value + ";");
        b.line("kiln_cursor += kiln_keep;");
    }

    std::string t_;
};

}  // namespace

std::string compaction_chunk_program_source(const scan_operation& count,
                                            const declare_input<compaction_input>& input,
                                            std::size_t chunk, scan_schedule schedule) {
    return chunk_program_source(count, input, chunk, schedule, cursor_loops(count));
}

}  // namespace kiln::detail
