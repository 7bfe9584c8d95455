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

void throw_output_too_small(const char* call, std::size_t needed, std::size_t capacity) {
    throw invalid_argument_error(
        call, std::to_string(needed) + " elements were selected but the output holds " +
                  std::to_string(capacity) + " (it received the first ones)");
}

}  // namespace kiln::detail
