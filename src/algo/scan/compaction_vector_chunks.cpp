// SPDX-License-Identifier: Apache-2.0
// Stream compaction's chunk loops by vectors (scan_chunks.hpp, scan_policy::chunk_vector_writes).
//
// The cursor loops (compaction_chunks.cpp) write one element per step, and the chain through the
// cursor holds them near 1.5 cycles per element, below what memory could take. Here the chunk is
// walked by vectors of 8 elements: the flags become an 8-bit mask, which picks from a table the
// order that puts the vector's kept elements first; the vector, so ordered, is stored whole at
// the cursor, which then advances by the mask's popcount. The lanes past the kept ones land where
// the next vector's kept elements will, and are overwritten by them.
//
// In the chained kernel, the first loop, which reads the chunk from memory to count it, also
// gathers its kept elements so into a stage in private memory (an eighth of the chunk), until
// the stage could overflow; after the look-back the stage is copied to the output, and the
// vectors resume where it stopped, over elements still in the core's cache. Where few elements
// are kept (copy_if keeping 1%, unique) the whole chunk is staged and read once, the compaction's
// work hidden behind the memory's; where many are, the stage covers the chunk's start only. In
// the stage vectors that keep nothing skip the permutation and the store: a branch taken the same
// way nearly always where few are kept, and rarely taken where many are. The two-pass kernels
// count, then write from the chunk's start.
//
// So that every write to the output stays within the chunk's own results (another work-item
// writes the next chunk's) and below the capacity, whole vectors go only while 8 more results fit
// before min(the chunk's end of results, capacity): the chunk's total, which the first loop
// counted, says where its results end. The elements after the last whole vector, fewer than 8
// kept ones unless the capacity stops the vectors, are written one by one behind a branch.
//
// How it is spelled decides what the device compiler makes of it (LLVM 15, PoCL 3.1, x86 with
// AVX-512): the table packs each order as eight 4-bit lane numbers in one word, unpacked by
// vector shifts into an index vector, the ordered lanes are picked by subscripts in a vector
// literal, and the vector is stored through a packed struct (one unaligned store): one variable
// permute (vpermd) and one store. OpenCL C's shuffle(), or indices loaded from a table of
// vectors, reach the backend as scalar loads and lane extracts through the stack; vstore8, which
// PoCL splits into halves, permutes only its first half.
#include <algorithm>
#include <kiln/detail/algo/scan_chunks.hpp>

#include "scan_chunk_writer.hpp"

namespace kiln::detail {
namespace {

/// The program-scope table: entry m holds, in its 4-bit nibbles from the lowest, the lanes
/// whose bits are set in m in ascending order, then lane 0 for the rest.
std::string order_table() {
    std::string text = "constant uint kiln_compaction_order[256] = {";
    for (unsigned mask = 0; mask < 256; ++mask) {
        unsigned order = 0, place = 0;
        for (unsigned j = 0; j < 8; ++j)
            if (mask >> j & 1) order |= j << (4 * place++);
        text += (mask % 8 == 0 ? "\n    " : " ") + std::to_string(order) + "u,";
    }
    return text + "\n};";
}

class vector_loops final : public chunk_loops<compaction_input> {
  public:
    vector_loops(const scan_operation& count, std::size_t chunk)
        : t_(count.value_type), chunk_(chunk) {}

    bool writes_out() const override { return false; }

    /// The chained kernel's first loop, reading the chunk from memory, also gathers its kept
    /// elements into the stage, by vectors, until the stage could overflow; vectors that keep
    /// nothing skip the permutation and the store. The rest of the chunk is only counted.
    void reduce(source_builder& b, const compaction_input& input) const override {
        define_types(b, input);
        const std::size_t stage = stage_elements(input);
        b.line(input.kept_type + " kiln_stage[" + std::to_string(stage) + "];");
        b.line(t_ + " kiln_staged = 0;");
        b.line("ulong kiln_from = begin;");
        b.open("for (; end - kiln_from >= 8 && kiln_staged <= " + std::to_string(stage - lanes) +
               "; kiln_from += 8)");
        read_vector(b, input, "kiln_from");
        b.line("if (kiln_mask == 0) continue;");
        store_kept(b, input, "private", "kiln_stage + kiln_staged");
        b.line("kiln_staged += popcount(kiln_mask);");
        b.close();
        if (input.in_place) {
            // The elements after the last whole vector too, each written where the next kept
            // one will be: the whole chunk is read before the look-back.
            b.open("for (; kiln_from < end; ++kiln_from)");
            b.line("const ulong idx = kiln_from;");
            for (const auto& statement : input.keep.statements) b.line(statement);
            b.line("kiln_stage[kiln_staged] = " + input.kept_value + ";");
            b.line("kiln_staged += " + input.keep.value + ";");
            b.close();
        }
        // Where the vectors resume after the look-back: through a volatile, so that LLVM does
        // not carry what it knows of the index into the second loop, whose loads it then
        // gathers lane by lane instead of loading them whole.
        b.line("volatile ulong kiln_resume = kiln_from;");
        b.line(t_ + " kiln_chunk_total = kiln_staged;");
        count(b, input.keep, "kiln_from");
    }

    void finish(source_builder& b, const compaction_input& input) const override {
        const std::string capacity = compaction_outputs::capacity;
        // The part's results start at its own output's first element (carry counts the parts
        // before), in the count type: 32 bits where the sizes allow.
        b.line(t_ + " kiln_cursor = (have ? prefix : 0) - carry;");
        b.line("const ulong kiln_room = kiln_cursor < " + capacity + " ? min((ulong)kiln_staged, " +
               capacity + " - kiln_cursor) : 0;");
        b.open("for (ulong kiln_i = 0; kiln_i < kiln_room; ++kiln_i)");
        b.line(std::string(compaction_outputs::out) +
               "[(ulong)kiln_cursor + kiln_i] = kiln_stage[kiln_i];");
        b.close();
        b.line("kiln_cursor += kiln_staged;");
        write_by_vectors(b, input, "kiln_resume", "kiln_chunk_total - kiln_staged");
    }

    void reduce_only(source_builder& b, const compaction_input& input) const override {
        b.line(t_ + " kiln_chunk_total = 0;");
        count(b, input.keep, "begin");
    }

    void finish_only(source_builder& b, const compaction_input& input) const override {
        define_types(b, input);
        b.line(t_ + " kiln_cursor = (have ? prefix : 0) - carry;");
        write_by_vectors(b, input, "begin", "kiln_chunk_total");
    }

  private:
    /// Elements per vector: the 8 bits of the table's index.
    static constexpr std::size_t lanes = 8;

    std::string vector_type(const compaction_input& input) const {
        return input.kept_type + std::to_string(lanes);
    }
    std::string unaligned(const compaction_input& input) const {
        return "kiln_unaligned_" + vector_type(input);
    }

    /// The order table and a vector type aligned to its size, stored through a packed struct
    /// (the cursor is anywhere): one unaligned store.
    void define_types(source_builder& b, const compaction_input& input) const {
        b.define("kiln_compaction_order", order_table());
        b.define(unaligned(input), "typedef struct __attribute__((packed)) { " +
                                       vector_type(input) + " v; } " + unaligned(input) + ";");
    }

    /// Adds the flags of elements [from, end) to kiln_chunk_total: a loop LLVM vectorises.
    void count(source_builder& b, const element_input& keep, const std::string& from) const {
        b.open("for (ulong idx = " + from + "; idx < end; ++idx)");
        for (const auto& statement : keep.statements) b.line(statement);
        b.line("kiln_chunk_total += " + keep.value + ";");
        b.close();
    }

    /// The 8 elements from `at` (kiln_v) and their flags as the bits of kiln_mask.
    void read_vector(source_builder& b, const compaction_input& input,
                     const std::string& at) const {
        const element_input& keep = input.keep;
        b.line("uint8 kiln_keep;");
        b.line(vector_type(input) + " kiln_v;");
        for (std::size_t j = 0; j < lanes; ++j) {
            b.open("");
            b.line("const ulong idx = " + at + " + " + std::to_string(j) + ";");
            for (const auto& statement : keep.statements) b.line(statement);
            b.line("kiln_keep" + lane(j) + " = (uint)(" + keep.value + ");");
            b.line("kiln_v" + lane(j) + " = " + input.kept_value + ";");
            b.close();
        }
        // The flags, one byte each, gather into the mask's bits by one multiplication: byte j
        // times 2^(56 - 7j) lands on bit 56 + j, and no other product reaches bits 56 to 63.
        b.line(
            "const uint kiln_mask = (uint)((as_ulong(convert_uchar8(kiln_keep)) * "
            "0x0102040810204080UL) >> 56);");
    }

    /// kiln_v with its kept lanes first, stored whole at `where` in address space `space`.
    void store_kept(source_builder& b, const compaction_input& input, const std::string& space,
                    const std::string& where) const {
        b.line(
            "const uint8 kiln_order = ((uint8)(kiln_compaction_order[kiln_mask]) >> "
            "(uint8)(0, 4, 8, 12, 16, 20, 24, 28)) & 7;");
        std::string picked = "(" + vector_type(input) + ")(";
        for (std::size_t j = 0; j < lanes; ++j)
            picked += (j ? ", " : "") + std::string("kiln_v[kiln_order") + lane(j) + "]";
        b.line("((" + space + " " + unaligned(input) + "*)(" + where + "))->v = " + picked + ");");
    }

    /// Writes the kept elements of [from, end), `remaining` of them, at kiln_cursor: whole
    /// vectors while 8 more results fit below min(the chunk's end of results, capacity), then
    /// one by one behind a branch.
    void write_by_vectors(source_builder& b, const compaction_input& input, const std::string& from,
                          const std::string& remaining) const {
        const std::string capacity = compaction_outputs::capacity;
        b.line("const ulong kiln_limit = min((ulong)kiln_cursor + (ulong)(" + remaining + "), " +
               capacity + ");");
        b.line("ulong kiln_at = " + from + ";");
        b.open("for (; end - kiln_at >= 8 && kiln_cursor + 8UL <= kiln_limit; kiln_at += 8)");
        read_vector(b, input, "kiln_at");
        store_kept(b, input, "global", std::string(compaction_outputs::out) + " + kiln_cursor");
        b.line("kiln_cursor += popcount(kiln_mask);");
        b.close();
        b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
        for (const auto& statement : input.keep.statements) b.line(statement);
        b.open("if (" + input.keep.value + ")");
        b.line(std::string("if (kiln_cursor < ") + capacity + ") " + compaction_outputs::out +
               "[kiln_cursor] = " + input.kept_value + ";");
        b.line("++kiln_cursor;");
        b.close();
        b.close();
    }

    /// Elements the chained kernel's stage holds: an eighth of the chunk, in the core's L1, or
    /// the whole chunk in place.
    std::size_t stage_elements(const compaction_input& input) const {
        return input.in_place ? chunk_ : std::max<std::size_t>(chunk_ / 8, lanes);
    }

    std::string t_;
    std::size_t chunk_;
};

}  // namespace

std::string compaction_vector_chunk_program_source(const scan_operation& count,
                                                   const declare_input<compaction_input>& input,
                                                   std::size_t chunk, scan_schedule schedule) {
    return chunk_program_source(count, input, chunk, schedule, vector_loops(count, chunk));
}

}  // namespace kiln::detail
