// The scan's CPU strategy (scan_chunks.hpp): chunk kernels of one work-item each.
#include <algorithm>
#include <kiln/algo/scan_chunks.hpp>

namespace kiln::detail {

std::size_t chunk_elements(const algorithm_policy& policy, std::size_t value_bytes) {
    return std::max<std::size_t>(16, policy.chunk_bytes / value_bytes / 16 * 16);
}

std::vector<std::string> chunk_scan_kernel_names() {
    return {"kiln_chunk_scan_chained", "kiln_chunk_scan_local", "kiln_chunk_scan_fix"};
}

namespace {

/// Writes the chunk kernels of one program.
class chunk_scan_writer {
  public:
    chunk_scan_writer(source_builder& b, const scan_operation& op, std::size_t chunk,
                      bool exclusive, bool scatter)
        : b_(b), op_(op), t_(op.value_type), exclusive_(exclusive), scatter_(scatter) {
        b_.constant("CHUNK", chunk);
    }

    void chained_kernel(const declare_input& input) {
        const element_text element = begin("kiln_chunk_scan_chained", &input);
        b_.line("const ulong c = atomic_inc((volatile global uint*)(kiln_temp + " +
                std::to_string(chunk_scan_scratch::ticket_offset) + "));");
        combine_chunk(element);
        // Look back from the nearest chunk, adding totals until an inclusive prefix: a chunk that
        // took an earlier ticket is running, so its flag is published in time.
        b_.open("if (c > 0)");
        b_.line("kiln_totals[c] = kiln_chunk_total;");
        b_.release_store("uint", "&kiln_flags[c]", "1");
        b_.close();
        b_.line("int have = c == 0 ? has_carry : 0;");
        b_.line(t_ + " prefix = carry;");
        b_.open("for (ulong k = c; k > 0;)");
        b_.line("--k;");
        b_.line("uint flag = 0;");
        b_.open("do");
        b_.acquire_load("uint", "&kiln_flags[k]", "flag");
        b_.close_with("while (flag == 0);");
        b_.line("const " + t_ + " earlier = flag == 2 ? kiln_prefixes[k] : kiln_totals[k];");
        b_.line("prefix = have ? " + combine("earlier", "prefix") + " : earlier;");
        b_.line("have = 1;");
        b_.line("if (flag == 2) break;");
        b_.close();
        b_.line("const " + t_ + " inclusive = have ? " + combine("prefix", "kiln_chunk_total") +
                " : kiln_chunk_total;");
        b_.line("kiln_prefixes[c] = inclusive;");
        b_.release_store("uint", "&kiln_flags[c]", "2");
        b_.line("if (c == chunks - 1) *kiln_total = inclusive;");
        finish_chunk(element);
        b_.end_kernel();
    }

    void local_kernel(const declare_input& input) {
        const element_text element = begin("kiln_chunk_scan_local", &input);
        b_.line("const ulong c = " + source_builder::group_id() + ";");
        combine_chunk(element);
        b_.line("kiln_totals[c] = kiln_chunk_total;");
        b_.end_kernel();
    }

    /// Takes the input's parameters too, unread, so that every kernel of the program binds the
    /// same arguments.
    void fix_kernel(const declare_input& input) {
        const element_text element = begin("kiln_chunk_scan_fix", &input);
        b_.line("const ulong c = " + source_builder::group_id() + ";");
        b_.line("const ulong begin = c * CHUNK;");
        b_.line("const ulong end = min(n, begin + CHUNK);");
        b_.line("int have = has_carry;");
        b_.line(t_ + " prefix = carry;");
        b_.open("for (ulong k = 0; k < c; ++k)");
        b_.line("prefix = have ? " + combine("prefix", "kiln_totals[k]") + " : kiln_totals[k];");
        b_.line("have = 1;");
        b_.close();
        b_.open("if (c == chunks - 1)");
        b_.line("*kiln_total = have ? " + combine("prefix", "kiln_totals[c]") +
                " : kiln_totals[c];");
        b_.close();
        finish_chunk(element);
        b_.end_kernel();
    }

  private:
    std::string combine(const std::string& a, const std::string& b) {
        return op_.combine(b_, a, b);
    }

    /// The kernel's header and its pointers into the scratch (chunk_scan_scratch).
    element_text begin(const std::string& name, const declare_input* input) {
        b_.begin_kernel(name, 1);
        b_.scalar_parameter<std::uint64_t>("n");
        if (!scatter_) b_.parameter("global " + t_ + "* out");
        b_.parameter("global uchar* kiln_temp");
        b_.parameter("int has_carry");
        b_.parameter(t_ + " carry");
        element_text element;
        if (input) element = (*input)(b_);
        b_.begin_body();
        using layout = chunk_scan_scratch;
        const ulong_text chunks(std::string("chunks"));
        b_.line("const ulong chunks = (n + CHUNK - 1) / CHUNK;");
        b_.line("global " + t_ + "* kiln_total = (global " + t_ + "*)(kiln_temp + " +
                std::to_string(layout::total_offset) + ");");
        b_.line("global uint* kiln_flags = (global uint*)(kiln_temp + " +
                std::to_string(layout::flags_offset) + ");");
        b_.line("global " + t_ + "* kiln_totals = (global " + t_ + "*)(kiln_temp + " +
                layout::totals_offset(chunks).text + ");");
        b_.line("global " + t_ + "* kiln_prefixes = (global " + t_ + "*)(kiln_temp + " +
                layout::prefixes_offset(chunks, op_.value_bytes).text + ");");
        return element;
    }

    /// The chunk's first pass: leaves `kiln_chunk_total`, the combination of chunk c's
    /// elements. A scan writes its own results into out meanwhile (an exclusive one all but the
    /// chunk's first), which finish_chunk then combines with the prefix; a scattering program
    /// only combines. The first element is peeled off, so that the loop carries no test of
    /// which element is first. (kiln_ names, since the input's statements share the loop's
    /// scope.)
    void combine_chunk(const element_text& element) {
        b_.line("const ulong begin = c * CHUNK;");
        b_.line("const ulong end = min(n, begin + CHUNK);");
        b_.line(t_ + " kiln_chunk_total;");
        b_.open("for (ulong idx = begin; idx < begin + 1; ++idx)");
        for (const auto& statement : element.statements) b_.line(statement);
        b_.line("kiln_chunk_total = " + value_of(element) + ";");
        if (!exclusive_ && !scatter_) b_.line("out[idx] = kiln_chunk_total;");
        b_.close();
        b_.open("for (ulong idx = begin + 1; idx < end; ++idx)");
        for (const auto& statement : element.statements) b_.line(statement);
        b_.line("const " + t_ + " kiln_x = " + value_of(element) + ";");
        if (exclusive_ && !scatter_) b_.line("out[idx] = kiln_chunk_total;");
        b_.line("kiln_chunk_total = " + combine("kiln_chunk_total", "kiln_x") + ";");
        if (!exclusive_ && !scatter_) b_.line("out[idx] = kiln_chunk_total;");
        b_.close();
    }

    /// The chunk's second pass, given `prefix` (where `have`): a scan combines the prefix with
    /// the results in out, in a loop without a carried dependency; a scattering program
    /// evaluates its elements again and runs the scatter code for each.
    void finish_chunk(const element_text& element) {
        if (scatter_) {
            b_.line(t_ + " running = prefix;");
            b_.open("for (ulong idx = begin; idx < end; ++idx)");
            for (const auto& statement : element.statements) b_.line(statement);
            b_.line("const " + t_ + " x = " + value_of(element) + ";");
            b_.line("const int had = have;");
            b_.line("const " + t_ + " before = running;");
            b_.line("running = have ? " + combine("running", "x") + " : x;");
            b_.line("have = 1;");
            if (!element.key.empty())
                b_.line("const " + element.key_type + " kiln_key = " + element.key + ";");
            element.scatter(b_);
            b_.close();
            return;
        }
        b_.open("if (have)");
        if (exclusive_) {
            b_.line("out[begin] = prefix;");
            b_.open("for (ulong idx = begin + 1; idx < end; ++idx)");
        } else {
            b_.open("for (ulong idx = begin; idx < end; ++idx)");
        }
        b_.line("out[idx] = " + combine("prefix", "out[idx]") + ";");
        b_.close();
        b_.close();
    }

    /// The element's value: its text, or its flag and payload composed.
    static std::string value_of(const element_text& element) {
        return element.value.empty() ? element.compose(element.flag, element.payload)
                                     : element.value;
    }

    source_builder& b_;
    const scan_operation& op_;
    std::string t_;
    bool exclusive_;
    bool scatter_;
};

}  // namespace

std::string chunk_scan_program_source(const scan_operation& op, const declare_input& input,
                                      std::size_t chunk, bool exclusive, bool scatter) {
    source_builder builder;
    chunk_scan_writer writer(builder, op, chunk, exclusive, scatter);
    writer.chained_kernel(input);
    writer.local_kernel(input);
    writer.fix_kernel(input);
    return builder.str();
}

}  // namespace kiln::detail
