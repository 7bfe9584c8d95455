// Stream compaction's program cache entry, errors and count-base test hook.
#include <atomic>
#include <kiln/algo/compaction.hpp>
#include <kiln/error.hpp>

namespace kiln::detail {
namespace {

std::atomic<std::uint64_t> count_base{0};

}  // namespace

std::uint64_t compaction_count_base() {
    return count_base.load();
}

scoped_compaction_count_base::scoped_compaction_count_base(std::uint64_t base)
    : previous_(count_base.exchange(base)) {}

scoped_compaction_count_base::~scoped_compaction_count_base() {
    count_base.store(previous_);
}

const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const compaction_plan& plan,
                                            const declare_input<compaction_input>& input) {
    const scan_operation count{
        plan.count_type(), plan.narrow ? 4u : 8u,
        [](source_builder&, const std::string& a, const std::string& b) {
            return "(" + a + " + " + b + ")";
        },
        1, plan.narrow ? state_packing::low_32_bits : state_packing::count_62_bits};
    return algorithm_program_for(
        dev, key, [&] { return scan_family_kernels(count, plan.policy, true); },
        [&] { return compaction_program_source(count, input, plan.policy); });
}

compaction_input declare_unique_input(source_builder& b, const std::string& t,
                                      const std::string& count_type, bool heads_on_host,
                                      bool in_place) {
    if (in_place) {
        // Key 0, the part's first, is kept on the host: output element r is key r + 1.
        b.parameter("global " + t + "* kiln_unique_keys");
        b.define("kiln_out", "#define kiln_out (kiln_unique_keys + 1)");
    } else {
        b.parameter("global " + t + "* kiln_out");
    }
    b.parameter("ulong kiln_capacity");
    b.parameter("global const " + t + "* kiln_keys");
    std::string head, kept_key, first_kept;
    if (heads_on_host) {
        head = "kiln_keys[idx + 1] != kiln_keys[idx]";
        kept_key = "kiln_keys[idx + 1]";
    } else {
        b.parameter("int kiln_has_previous");
        b.parameter(t + " kiln_previous");
        first_kept = "!kiln_has_previous || kiln_keys[0] != kiln_previous";
        head = "idx == 0 ? " + first_kept + " : kiln_keys[idx] != kiln_keys[idx - 1]";
        kept_key = "kiln_keys[idx]";
    }
    return compaction_input{
        .keep = {.value = "(" + count_type + ")(" + head + ")"},
        .kept_type = t,
        .kept_value = kept_key,
        .scatter =
            [=](source_builder& s) {
                s.line("if (x != 0) kiln_out[running - 1 - carry] = " + kept_key + ";");
            },
        .first_kept = first_kept,
        .in_place = in_place};
}

void throw_output_too_small(const char* call, std::size_t needed, std::size_t capacity) {
    throw invalid_argument_error(
        call, std::to_string(needed) + " elements were selected but the output holds " +
                  std::to_string(capacity) + " (it received the first ones)");
}

}  // namespace kiln::detail
