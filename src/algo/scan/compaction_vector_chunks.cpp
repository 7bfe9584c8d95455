// Stream compaction's chunk loops by vectors (scan_chunks.hpp, scan_policy::chunk_vector_writes).
//
// The cursor loops (compaction_chunks.cpp) write one element per step, and the chain through the
// cursor holds them near 1.5 cycles per element, below what memory could take. Here the chunk is
// walked by vectors of 8 elements: the flags become an 8-bit mask, which picks from a table the
// order that puts the vector's kept elements first; the vector, so ordered, is stored whole at
// the cursor, which then advances by the mask's popcount. The lanes past the kept ones land where
// the next vector's kept elements will, and are overwritten by them.
//
// So that every such write stays within the chunk's own results (another work-item writes the
// next chunk's) and below the capacity, whole vectors go only while 8 more results fit before
// min(the chunk's end of results, capacity): the chunk's total, which the first loop counted,
// says where its results end. The elements after the last whole vector, fewer than 8 kept ones
// unless the capacity stops the vectors, are written one by one behind a branch.
//
// How it is spelled decides what the device compiler makes of it (LLVM 15, PoCL 3.1, x86 with
// AVX-512): the table packs each order as eight 4-bit lane numbers in one word, unpacked by
// vector shifts into an index vector, the ordered lanes are picked by subscripts in a vector
// literal, and the vector is stored through a packed struct (one unaligned store): one variable
// permute (vpermd) and one store. OpenCL C's shuffle(), or indices loaded from a table of
// vectors, reach the backend as scalar loads and lane extracts through the stack; vstore8, which
// PoCL splits into halves, permutes only its first half.
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
    explicit vector_loops(const scan_operation& count) : t_(count.value_type) {}

    bool writes_out() const override { return false; }

    void reduce(source_builder& b, const compaction_input& input) const override {
        const element_input& keep = input.keep;
        b.line(t_ + " kiln_chunk_total = 0;");
        b.open("for (ulong idx = begin; idx < end; ++idx)");
        for (const auto& statement : keep.statements) b.line(statement);
        b.line("kiln_chunk_total += " + keep.value + ";");
        b.close();
    }

    void finish(source_builder& b, const compaction_input& input) const override {
        b.define("kiln_compaction_order", order_table());
        const element_input& keep = input.keep;
        const std::string capacity = compaction_outputs::capacity;
        const std::string out = compaction_outputs::out;
        const std::string vector = input.kept_type + std::to_string(lanes);
        // A vector type aligned to its size; the cursor is anywhere, so the store goes through a
        // packed struct, one unaligned store.
        const std::string unaligned = "kiln_unaligned_" + vector;
        b.define(unaligned,
                 "typedef struct __attribute__((packed)) { " + vector + " v; } " + unaligned + ";");
        // The part's results start at its own output's first element (carry counts the parts
        // before), in the count type: 32 bits where the sizes allow.
        b.line(t_ + " kiln_cursor = (have ? prefix : 0) - carry;");
        b.line("const ulong kiln_limit = min((ulong)kiln_cursor + (ulong)kiln_chunk_total, " +
               capacity + ");");
        b.line("ulong kiln_at = begin;");
        b.open("for (; end - kiln_at >= 8 && kiln_cursor + 8UL <= kiln_limit; kiln_at += 8)");
        b.line("uint8 kiln_keep;");
        b.line(vector + " kiln_v;");
        for (std::size_t j = 0; j < lanes; ++j) {
            b.open("");
            b.line("const ulong idx = kiln_at + " + std::to_string(j) + ";");
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
        b.line(
            "const uint8 kiln_order = ((uint8)(kiln_compaction_order[kiln_mask]) >> "
            "(uint8)(0, 4, 8, 12, 16, 20, 24, 28)) & 7;");
        std::string picked = "(" + vector + ")(";
        for (std::size_t j = 0; j < lanes; ++j)
            picked += (j ? ", " : "") + std::string("kiln_v[kiln_order") + lane(j) + "]";
        b.line("((global " + unaligned + "*)(" + out + " + kiln_cursor))->v = " + picked + ");");
        b.line("kiln_cursor += popcount(kiln_mask);");
        b.close();
        b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
        for (const auto& statement : keep.statements) b.line(statement);
        write_behind_a_branch(b, keep.value, input);
        b.close();
    }

  private:
    /// Elements per vector: the 8 bits of the table's index.
    static constexpr std::size_t lanes = 8;

    /// Element idx, whose count is `keep`, written at the cursor where kept and below the
    /// capacity (its statements run before).
    void write_behind_a_branch(source_builder& b, const std::string& keep,
                               const compaction_input& input) const {
        b.open("if (" + keep + ")");
        b.line(std::string("if (kiln_cursor < ") + compaction_outputs::capacity + ") " +
               compaction_outputs::out + "[kiln_cursor] = " + input.kept_value + ";");
        b.line("++kiln_cursor;");
        b.close();
    }

    std::string t_;
};

}  // namespace

std::string compaction_vector_chunk_program_source(const scan_operation& count,
                                                   const declare_input<compaction_input>& input,
                                                   std::size_t chunk) {
    return chunk_program_source(count, input, chunk, vector_loops(count));
}

}  // namespace kiln::detail
