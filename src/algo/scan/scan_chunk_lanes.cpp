// The scan's chunk loops by vectors (scan_chunks.hpp, algorithm_policy::chunk_lanes): for scalar
// values under lanewise operations (sum, min, max).
//
// Element by element, a scan is one chain of dependent operations, one per element, which a core
// runs no faster than the operation's latency. Here the chunk is walked by vectors of `lanes`
// elements instead: the first loop only reduces, into one vector of partial results; the second,
// after the look-back, scans each vector in registers (log2(lanes) shuffles and combines),
// combines it with the running prefix, which every lane holds, and stores it, so that the chain
// has one combine per vector. The input is read twice, the second time from the core's cache, and
// `out` written once (the element loops write it twice).
//
// Partial results per lane combine the elements in another order than one after another, which
// only commutative operations allow (scan_operation::lanewise); float sums round differently, as
// the tile kernels' tree scans do (docs/algorithms.md).
#include <kiln/detail/algo/scan_chunks.hpp>

#include "scan_chunk_writer.hpp"

namespace kiln::detail {
namespace {

/// The OpenCL C name of lane `j` of a vector (s0 ... s9, sa ... sf).
std::string lane(std::size_t j) {
    return std::string(".s") + "0123456789abcdef"[j];
}

/// `(type)(a, b, ...)`, a vector literal of `lanes` values given by `value(j)`.
template <class Value>
std::string vector_literal(const std::string& type, std::size_t lanes, Value value) {
    std::string text = "(" + type + ")(";
    for (std::size_t j = 0; j < lanes; ++j) text += (j ? ", " : "") + std::to_string(value(j));
    return text + ")";
}

class lane_scan_loops final : public chunk_loops {
  public:
    lane_scan_loops(const scan_operation& op, bool exclusive, std::size_t lanes)
        : op_(op),
          t_(op.value_type),
          vector_(op.value_type + std::to_string(lanes)),
          index_(op.value_bytes == 8 ? "ulong" : "uint"),
          lanes_(lanes),
          exclusive_(exclusive) {}

    bool writes_out() const override { return true; }

    /// kiln_chunk_total: the first element, then the lanes' partial results in lane order, then
    /// the elements after the last whole vector.
    void reduce(source_builder& b, const element_text& element) const override {
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

    void finish(source_builder& b, const element_text& element) const override {
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
        b.line(vector_ + " kiln_carry = (" + vector_ + ")(kiln_running);");
        b.open("for (; end - kiln_at >= " + n + "; kiln_at += " + n + ")");
        load_vector(b, element, "kiln_at", "kiln_v");
        // Lane j gathers lanes j - 2^s.. j, step by step, keeping the order of the elements.
        for (std::size_t step = 1; step < lanes_; step *= 2) {
            const std::string shifted =
                "shuffle(kiln_v, " +
                vector_literal(index_ + n, lanes_,
                               [&](std::size_t j) { return j >= step ? j - step : 0; }) +
                ")";
            b.line("kiln_v = select(kiln_v, " + combine(b, shifted, "kiln_v") + ", " +
                   vector_literal(mask_type(), lanes_,
                                  [&](std::size_t j) { return j >= step ? -1 : 0; }) +
                   ");");
        }
        // The running prefix stays in every lane of kiln_carry, so that the chain from one
        // vector to the next is one combine; the last lane's broadcast is off that chain.
        b.line("const " + vector_ + " kiln_results = " + combine(b, "kiln_carry", "kiln_v") + ";");
        if (exclusive_) {
            b.line("vstore" + n + "(shuffle2(kiln_carry, kiln_results, " +
                   vector_literal(index_ + n, lanes_,
                                  [&](std::size_t j) { return j ? lanes_ + j - 1 : 0; }) +
                   "), 0, out + kiln_at);");
        } else {
            b.line("vstore" + n + "(kiln_results, 0, out + kiln_at);");
        }
        b.line(
            "kiln_carry = " +
            combine(b, "kiln_carry",
                    "shuffle(kiln_v, (" + index_ + n + ")(" + std::to_string(lanes_ - 1) + "))") +
            ";");
        b.close();
        b.line("kiln_running = kiln_carry.s0;");
        b.open("for (ulong idx = kiln_at; idx < end; ++idx)");
        for (const auto& statement : element.statements) b.line(statement);
        b.line("const " + t_ + " kiln_x = " + element.value + ";");
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

    /// select's mask type: signed integers as wide as the values.
    std::string mask_type() const {
        return (op_.value_bytes == 8 ? "long" : "int") + std::to_string(lanes_);
    }

    /// `name` = element `at`.
    void load_scalar(source_builder& b, const element_text& element, const std::string& at,
                     const std::string& name) const {
        b.open("");
        b.line("const ulong idx = " + at + ";");
        for (const auto& statement : element.statements) b.line(statement);
        b.line(name + " = " + element.value + ";");
        b.close();
    }

    /// Declares `name`, a vector of elements at.. at + lanes - 1, each computed by the input's
    /// text (plain loads of consecutive elements, which the device compiler merges).
    void load_vector(source_builder& b, const element_text& element, const std::string& at,
                     const std::string& name) const {
        b.line(vector_ + " " + name + ";");
        for (std::size_t j = 0; j < lanes_; ++j)
            load_scalar(b, element, at + " + " + std::to_string(j), name + lane(j));
    }

    const scan_operation& op_;
    std::string t_, vector_, index_;
    std::size_t lanes_;
    bool exclusive_;
};

}  // namespace

bool chunk_lanes_apply(const scan_operation& op, std::size_t lanes) {
    return op.lanewise && op.components == 1 &&
           (lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16);
}

std::string chunk_lane_scan_program_source(const scan_operation& op, const declare_input& input,
                                           std::size_t chunk, bool exclusive, std::size_t lanes) {
    return chunk_program_source(op, input, chunk, lane_scan_loops(op, exclusive, lanes));
}

}  // namespace kiln::detail
