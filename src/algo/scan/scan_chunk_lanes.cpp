// SPDX-License-Identifier: Apache-2.0
// The scan's chunk loops by vectors (scan_chunks.hpp, scan_policy::chunk_lanes): for scalar
// values under lanewise operations (sum, min, max).
//
// Element by element, a scan is one chain of dependent operations, one per element, which a core
// runs no faster than the operation's latency. Here the chunk is walked by vectors of `lanes`
// elements instead: the first loop only reduces, into one vector of partial results; the second,
// after the look-back, scans each vector in registers (each 16-byte block by shuffles, then the
// blocks' offsets), combines it with the running prefix, which every lane holds, and stores it, so
// that the chain has one combine per vector. The input is read twice, the second time from the
// core's cache, and `out` written once where the input is an array (the element loops write it
// twice; other inputs are written to it first, so that the second loop reads whole vectors).
//
// Partial results per lane combine the elements in another order than one after another, which
// only commutative operations allow (scan_operation::lanewise); float sums round differently, as
// the tile kernels' tree scans do (docs/algorithms.md).
#include <algorithm>
#include <kiln/detail/algo/scan_chunks.hpp>

#include "scan_chunk_writer.hpp"

namespace kiln::detail {
namespace {

class lane_scan_loops final : public chunk_loops<element_input> {
  public:
    lane_scan_loops(const scan_operation& op, bool exclusive, std::size_t lanes)
        : op_(op),
          t_(op.value_type),
          vector_(op.value_type + std::to_string(lanes)),
          lanes_(lanes),
          exclusive_(exclusive) {}

    bool writes_out() const override { return true; }

    /// kiln_chunk_total: the first element, then the lanes' partial results in lane order, then
    /// the elements after the last whole vector.
    void reduce(source_builder& b, const element_input& element) const override {
        b.line(t_ + " kiln_chunk_total;");
        b.open("");
        load_scalar(b, element, "begin", "kiln_chunk_total");
        b.line("ulong kiln_at = begin + 1;");
        b.open("if (end - kiln_at >= " + std::to_string(lanes_) + ")");
        load_vector(b, element, "kiln_at", "kiln_partial");
        b.open("for (kiln_at += " + std::to_string(lanes_) + "; end - kiln_at >= " +
               std::to_string(lanes_) + "; kiln_at += " + std::to_string(lanes_) + ")");
        load_vector(b, element, "kiln_at", "kiln_v");
        b.line("kiln_partial = " + combine(b, "kiln_partial", "kiln_v") + ";");
        b.close();
        for (std::size_t j = 0; j < lanes_; ++j)
            b.line("kiln_chunk_total = " +
                   combine(b, "kiln_chunk_total", "kiln_partial" + lane(j)) + ";");
        b.close();
        b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
        for (const auto& statement : element.statements) b.line(statement);
        b.line("kiln_chunk_total = " + combine(b, "kiln_chunk_total", element.value) + ";");
        b.close();
        b.close();
    }

    void finish(source_builder& b, const element_input& element) const override {
        const std::string n = std::to_string(lanes_);
        b.open("");
        b.line(t_ + " kiln_running = prefix;");
        b.line("ulong kiln_at = begin;");
        // Without a prefix the first element starts the chain (and an exclusive scan has no
        // result for it, as the element loops leave it).
        b.open("if (!have)");
        load_scalar(b, element, "begin", "kiln_running");
        if (!exclusive_) b.line("out[begin] = kiln_running;");
        b.line("kiln_at = begin + 1;");
        b.close();
        // The vectors come from one load each: from the input where it is an array of the
        // values, else from `out`, where a first loop (which the compiler vectorises, the
        // elements being independent) writes the input's values.
        std::string array = element.plain_array;
        const bool staged_in_out = array.empty();
        if (staged_in_out) {
            array = "out";
            b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
            for (const auto& statement : element.statements) b.line(statement);
            b.line("out[idx] = " + element.value + ";");
            b.close();
        }
        b.line(vector_ + " kiln_carry = (" + vector_ + ")(kiln_running);");
        b.open("for (; end - kiln_at >= " + n + "; kiln_at += " + n + ")");
        load_array(b, array, "kiln_at", "kiln_v");
        // Each block of lanes_in_block() lanes (one 16-byte register lane of the vector) is
        // scanned first, step by step, lane j gathering lanes j - 2^s.. j of its block: shuffles
        // within register lanes take one source. Vectors are rearranged by vector literals of
        // components, which every backend's OpenCL C takes (CUDA's translation has no shuffle);
        // lanes are kept by select, which compilers turn into one blend.
        const std::size_t block = lanes_in_block();
        for (std::size_t step = 1; step < block; step *= 2) {
            const auto from_lane = [&](std::size_t j) { return j % block >= step; };
            b.line("const " + vector_ + " kiln_step" + std::to_string(step) + " = " +
                   combine(b,
                           components("kiln_v",
                                      [&](std::size_t j) { return from_lane(j) ? j - step : j; }),
                           "kiln_v") +
                   ";");
            b.line("kiln_v = select(kiln_v, kiln_step" + std::to_string(step) + ", " +
                   mask_components(from_lane) + ");");
        }
        // Then the blocks' totals, in order, become each later block's offset. The running
        // prefix stays in every lane of kiln_carry, and the chain from one vector to the next
        // is one combine with the vector's total, which only the loaded values make: a shuffle
        // whose unused lanes the compiler may take from any register (the prefix's, once) must
        // not feed it.
        const std::size_t blocks = lanes_ / block;
        const auto block_last = [&](std::size_t k) {
            return "kiln_v" + lane(k * block + block - 1);
        };
        b.line("const " + t_ + " kiln_block0 = " + block_last(0) + ";");
        for (std::size_t k = 1; k < blocks; ++k)
            b.line("const " + t_ + " kiln_block" + std::to_string(k) + " = " +
                   combine(b, "kiln_block" + std::to_string(k - 1), block_last(k)) + ";");
        std::string base = "kiln_carry";
        if (blocks > 1) {
            const std::string offsets = components([&](std::size_t j) {
                return "kiln_block" + std::to_string(j < block ? 0 : j / block - 1);
            });
            b.line("const " + vector_ + " kiln_base = select(kiln_carry, " +
                   combine(b, "kiln_carry", offsets) + ", " +
                   mask_components([&](std::size_t j) { return j >= block; }) + ");");
            base = "kiln_base";
        }
        b.line("const " + vector_ + " kiln_results = " + combine(b, base, "kiln_v") + ";");
        const std::string results = exclusive_ ? components([&](std::size_t j) {
            return j ? "kiln_results" + lane(j - 1) : std::string("kiln_carry.s0");
        })
                                               : std::string("kiln_results");
        b.line("vstore" + n + "(" + results + ", 0, out + kiln_at);");
        b.line("kiln_carry = " +
               combine(b, "kiln_carry",
                       "(" + vector_ + ")(kiln_block" + std::to_string(blocks - 1) + ")") +
               ";");
        b.close();
        b.line("kiln_running = kiln_carry.s0;");
        b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
        // The elements after the last whole vector wait in `out` where the first loop put them:
        // evaluated again, an input that reads `out` (a scan in place) would read them changed.
        if (staged_in_out) {
            b.line("const " + t_ + " kiln_x = out[idx];");
        } else {
            for (const auto& statement : element.statements) b.line(statement);
            b.line("const " + t_ + " kiln_x = " + element.value + ";");
        }
        if (exclusive_) b.line("out[idx] = kiln_running;");
        b.line("kiln_running = " + combine(b, "kiln_running", "kiln_x") + ";");
        if (!exclusive_) b.line("out[idx] = kiln_running;");
        b.close();
        b.close();
    }

  private:
    std::string combine(source_builder& b, const std::string& x, const std::string& y) const {
        return op_.combine(b, x, y);
    }

    /// `(vector)(c0, c1, ...)`, lane j being the text `component(j)`.
    template <class Component>
    std::string components(Component component) const {
        std::string text = "(" + vector_ + ")(";
        for (std::size_t j = 0; j < lanes_; ++j) text += (j ? ", " : "") + component(j);
        return text + ")";
    }
    /// select's mask: signed integers as wide as the values, lane j all ones where `set(j)`.
    template <class Set>
    std::string mask_components(Set set) const {
        std::string text = "(" + std::string(op_.value_bytes == 8 ? "long" : "int") +
                           std::to_string(lanes_) + ")(";
        for (std::size_t j = 0; j < lanes_; ++j)
            text += (j ? ", " : "") + std::string(set(j) ? "-1" : "0");
        return text + ")";
    }
    /// `(vector)(v.s<i0>, v.s<i1>, ...)`, lane j being lane `index(j)` of `v`.
    template <class Index>
    std::string components(const std::string& v, Index index) const {
        return components([&](std::size_t j) { return v + lane(index(j)); });
    }

    /// `name` = element `at`.
    void load_scalar(source_builder& b, const element_input& element, const std::string& at,
                     const std::string& name) const {
        b.open("");
        b.line("const ulong idx = " + at + ";");
        for (const auto& statement : element.statements) b.line(statement);
        b.line(name + " = " + element.value + ";");
        b.close();
    }

    /// Declares `name`, a vector of elements at.. at + lanes - 1: one load where the input is an
    /// array of the values, else each lane computed by the input's text. (Lanes computed one by
    /// one reach the compiler as scalars, which it merges into pieces of loads, and gathers,
    /// around the scan's shuffles; the reduction's loop has none.)
    void load_vector(source_builder& b, const element_input& element, const std::string& at,
                     const std::string& name) const {
        if (const std::string& array = element.plain_array; !array.empty()) {
            load_array(b, array, at, name);
            return;
        }
        b.line(vector_ + " " + name + ";");
        for (std::size_t j = 0; j < lanes_; ++j)
            load_scalar(b, element, at + " + " + std::to_string(j), name + lane(j));
    }

    /// Declares `name`, elements at.. at + lanes - 1 of `array`, converted to the values' type as
    /// the element's text is where it is assigned (an identity where the array holds them).
    void load_array(source_builder& b, const std::string& array, const std::string& at,
                    const std::string& name) const {
        b.line(vector_ + " " + name + " = convert_" + vector_ + "(vload" + std::to_string(lanes_) +
               "(0, " + array + " + " + at + "));");
    }

    /// Lanes per 16 bytes of the vector (at most all of them).
    std::size_t lanes_in_block() const { return std::min(lanes_, 16 / op_.value_bytes); }

    const scan_operation& op_;
    std::string t_, vector_;
    std::size_t lanes_;
    bool exclusive_;
};

}  // namespace

bool chunk_lanes_apply(const scan_operation& op, std::size_t lanes) {
    return op.lanewise && op.components == 1 &&
           (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16);
}

std::string chunk_lane_scan_program_source(const scan_operation& op,
                                           const declare_input<element_input>& input,
                                           std::size_t chunk, scan_schedule schedule,
                                           bool exclusive, std::size_t lanes) {
    return chunk_program_source(op, input, chunk, schedule, lane_scan_loops(op, exclusive, lanes));
}

}  // namespace kiln::detail
