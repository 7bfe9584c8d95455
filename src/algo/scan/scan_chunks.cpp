// SPDX-License-Identifier: Apache-2.0
// The scan's CPU strategy (scan_chunks.hpp): chunk kernels of one work-item each. The kernels'
// frame and look-back are written here once; the scan's and stream compaction's loops over a
// chunk are chunk_loops strategies (scan_chunk_writer.hpp).
#include <algorithm>
#include <kiln/detail/algo/scan_chunks.hpp>

#include "algo/lookback_state.hpp"
#include "scan_chunk_writer.hpp"

namespace kiln::detail {

std::size_t chunk_elements(const scan_policy& policy, std::size_t value_bytes) {
    return std::max<std::size_t>(16, policy.chunk_bytes / value_bytes / 16 * 16);
}

std::vector<const char*> chunk_scan_kernel_names(scan_schedule schedule) {
    if (schedule == scan_schedule::single_pass) return {chunk_scan_kernel::chained};
    return {chunk_scan_kernel::local, chunk_scan_kernel::fix};
}

std::vector<kernel_description> chunk_scan_kernels(const scan_operation& op, bool scatter,
                                                   scan_schedule schedule) {
    std::vector<kernel_description> kernels;
    for (const char* name : chunk_scan_kernel_names(schedule))
        kernels.push_back(scan_kernel_description(name, op, !scatter, true));
    return kernels;
}

namespace {

/// Writes the chunk kernels of one program around an algorithm's loops.
class chunk_kernel_writer {
  public:
    chunk_kernel_writer(source_builder& b, const scan_operation& op, std::size_t chunk,
                        chunk_kernel_steps& steps)
        : b_(b), op_(op), t_(op.value_type), steps_(steps), state_(lookback_state::for_chunks(op)) {
        b_.constant("CHUNK", chunk);
    }

    void chained_kernel() {
        begin(chunk_scan_kernel::chained);
        b_.line("const ulong c = atomic_inc((volatile global uint*)(kiln_temp + " +
                std::to_string(chunk_scan_scratch_layout<>::ticket_offset()) + "));");
        chunk_bounds();
        steps_.reduce(b_);
        // The inclusive prefix of the chunk before: a chunk that took an earlier ticket is
        // running, so it is published in time. Always that one, so that the order of
        // combination, and a float result's bits, do not depend on timing (a look-back over
        // earlier chunks' totals folds from whichever prefix it meets first); a chunk's own
        // work is long beside the wait.
        b_.line("int have = has_carry;");
        b_.line(t_ + " prefix = carry;");
        b_.open("if (c > 0)");
        b_.line("uint flag = 0;");
        b_.line("uint word = 0;");
        state_.poll_until_prefix(b_, "c - 1");
        state_.read_value(b_, "c - 1", "word");
        b_.line("prefix = value;");
        b_.line("have = 1;");
        b_.close();
        b_.line("const " + t_ + " inclusive = have ? " + combine("prefix", "kiln_chunk_total") +
                " : kiln_chunk_total;");
        state_.publish(b_, "c", "inclusive", 2);
        b_.line("if (c == chunks - 1) *kiln_total = inclusive;");
        steps_.finish(b_);
        b_.end_kernel();
    }

    void local_kernel() {
        begin(chunk_scan_kernel::local);
        b_.line("const ulong c = " + source_builder::group_id() + ";");
        chunk_bounds();
        steps_.reduce_only(b_);
        b_.line("kiln_totals[c] = kiln_chunk_total;");
        b_.end_kernel();
    }

    /// Takes the input's parameters too, unread where the loops read nothing, so that every
    /// kernel of the program binds the same arguments.
    void fix_kernel() {
        begin(chunk_scan_kernel::fix);
        b_.line("const ulong c = " + source_builder::group_id() + ";");
        chunk_bounds();
        b_.line("int have = has_carry;");
        b_.line(t_ + " prefix = carry;");
        b_.open("for (ulong k = 0; k < c; ++k)");
        b_.line("prefix = have ? " + combine("prefix", "kiln_totals[k]") + " : kiln_totals[k];");
        b_.line("have = 1;");
        b_.close();
        b_.line("const " + t_ + " kiln_chunk_total = kiln_totals[c];");
        b_.open("if (c == chunks - 1)");
        b_.line("*kiln_total = have ? " + combine("prefix", "kiln_chunk_total") +
                " : kiln_chunk_total;");
        b_.close();
        steps_.finish_only(b_);
        b_.end_kernel();
    }

  private:
    std::string combine(const std::string& a, const std::string& b) {
        return op_.combine(b_, a, b);
    }

    /// The kernel's header and its pointers into the scratch (chunk_scan_scratch_layout).
    void begin(const char* name) {
        b_.begin_kernel(name, 1);
        scan_kernel_description(name, op_, steps_.writes_out(), true).declare(b_);
        steps_.declare_parameters(b_);
        b_.begin_body();
        const chunk_scan_scratch_layout<ulong_text> layout{std::string("chunks"), op_.value_bytes};
        b_.line("const ulong chunks = (n + CHUNK - 1) / CHUNK;");
        b_.line("global " + t_ + "* kiln_total = (global " + t_ + "*)(kiln_temp + " +
                std::to_string(layout.total_offset()) + ");");
        b_.line("global uint* kiln_flags = (global uint*)(kiln_temp + " +
                std::to_string(layout.flags_offset()) + ");");
        b_.line("global " + t_ + "* kiln_totals = (global " + t_ + "*)(kiln_temp + " +
                layout.totals_offset().text + ");");
        b_.line("global " + t_ + "* kiln_prefixes = (global " + t_ + "*)(kiln_temp + " +
                layout.prefixes_offset().text + ");");
    }

    void chunk_bounds() {
        b_.line("const ulong begin = c * CHUNK;");
        b_.line("const ulong end = min(n, begin + CHUNK);");
    }

    source_builder& b_;
    const scan_operation& op_;
    std::string t_;
    chunk_kernel_steps& steps_;
    const lookback_state state_;
};

/// Loops that combine the elements as the scan's operation does, in order.
template <class Input>
class combining_loops : public chunk_loops<Input> {
  public:
    explicit combining_loops(const scan_operation& op) : op_(op), t_(op.value_type) {}

  protected:
    std::string combine(source_builder& b, const std::string& x, const std::string& y) const {
        return op_.combine(b, x, y);
    }

    /// Folds the chunk's elements into `kiln_chunk_total`, running `before` where an element
    /// (`kiln_x`) is known but not yet folded and `after` once it is. The first element is peeled
    /// off, so that the loop carries no test of which element is first. (kiln_ names, since the
    /// input's statements share the loop's scope.)
    template <class Before, class After>
    void fold(source_builder& b, const element_input& element, Before before, After after) const {
        b.line(t_ + " kiln_chunk_total;");
        b.open("for (ulong idx = begin; idx < begin + 1; ++idx)");
        for (const auto& statement : element.statements) b.line(statement);
        b.line("kiln_chunk_total = " + element.value + ";");
        after(b);
        b.close();
        b.open("for (ulong idx = begin + 1; idx < end; ++idx)");
        for (const auto& statement : element.statements) b.line(statement);
        b.line("const " + t_ + " kiln_x = " + element.value + ";");
        before(b);
        b.line("kiln_chunk_total = " + combine(b, "kiln_chunk_total", "kiln_x") + ";");
        after(b);
        b.close();
    }

    const scan_operation& op_;
    std::string t_;
};

/// A scan: the first pass writes the chunk's own results into out (an exclusive scan all but
/// the chunk's first), and the second combines the prefix with them in a loop without a carried
/// dependency, over elements still in the core's cache.
class scan_loops final : public combining_loops<element_input> {
  public:
    scan_loops(const scan_operation& op, bool exclusive)
        : combining_loops(op), exclusive_(exclusive) {}

    bool writes_out() const override { return true; }

    void reduce(source_builder& b, const element_input& element) const override {
        const auto before = [&](source_builder& s) {
            if (exclusive_) s.line("out[idx] = kiln_chunk_total;");
        };
        const auto after = [&](source_builder& s) {
            if (!exclusive_) s.line("out[idx] = kiln_chunk_total;");
        };
        fold(b, element, before, after);
    }

    void finish(source_builder& b, const element_input&) const override {
        b.open("if (have)");
        if (exclusive_) {
            b.line("out[begin] = prefix;");
            b.open("for (ulong idx = begin + 1; idx < end; ++idx)");
        } else {
            b.open("for (ulong idx = begin; idx < end; ++idx)");
        }
        b.line("out[idx] = " + combine(b, "prefix", "out[idx]") + ";");
        b.close();
        b.close();
    }

  private:
    bool exclusive_;
};

/// Stream compaction behind a branch per element: the first pass only counts, and the second
/// evaluates the elements again and runs the input's scatter code for each, with the scan's
/// names (x, running, before, had, idx), as the tile kernels do.
class scatter_loops final : public combining_loops<compaction_input> {
  public:
    using combining_loops::combining_loops;

    bool writes_out() const override { return false; }

    void reduce(source_builder& b, const compaction_input& input) const override {
        fold(
            b, input.keep, [](source_builder&) {}, [](source_builder&) {});
    }

    void finish(source_builder& b, const compaction_input& input) const override {
        b.line(t_ + " running = prefix;");
        b.open("for (ulong idx = begin; idx < end; ++idx)");
        for (const auto& statement : input.keep.statements) b.line(statement);
        b.line("const " + t_ + " x = " + input.keep.value + ";");
        b.line("const int had = have;");
        b.line("const " + t_ + " before = running;");
        b.line("running = have ? " + combine(b, "running", "x") + " : x;");
        b.line("have = 1;");
        input.scatter(b);
        b.close();
    }
};

}  // namespace

std::string chunk_program_source(const scan_operation& op, std::size_t chunk,
                                 scan_schedule schedule, chunk_kernel_steps& steps) {
    source_builder builder;
    chunk_kernel_writer writer(builder, op, chunk, steps);
    if (schedule == scan_schedule::single_pass) {
        writer.chained_kernel();
    } else {
        writer.local_kernel();
        writer.fix_kernel();
    }
    return builder.str();
}

std::string chunk_scan_program_source(const scan_operation& op,
                                      const declare_input<element_input>& input, std::size_t chunk,
                                      scan_schedule schedule, bool exclusive) {
    return chunk_program_source(op, input, chunk, schedule, scan_loops(op, exclusive));
}

std::string compaction_scatter_chunk_program_source(const scan_operation& count,
                                                    const declare_input<compaction_input>& input,
                                                    std::size_t chunk, scan_schedule schedule) {
    return chunk_program_source(count, input, chunk, schedule, scatter_loops(count));
}

}  // namespace kiln::detail
