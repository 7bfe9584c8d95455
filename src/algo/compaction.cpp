// Stream compaction's program cache entry and errors.
#include <kiln/algo/compaction.hpp>
#include <kiln/error.hpp>

namespace kiln::detail {

const algorithm_program& compaction_program(const device& dev, const std::string& key,
                                            const algorithm_policy& policy,
                                            const declare_input& input) {
    return algorithm_program_for(dev, key, scan_kernel_names(), [&] {
        const scan_operation count{"ulong", 8,
                                   [](source_builder&, const std::string& a, const std::string& b) {
                                       return "(" + a + " + " + b + ")";
                                   },
                                   1, state_packing::count_62_bits};
        return scan_program_source(count, input, policy, false, true);
    });
}

void throw_output_too_small(const char* call, std::size_t needed, std::size_t capacity) {
    throw invalid_argument_error(
        call, std::to_string(needed) + " elements were selected but the output holds " +
                  std::to_string(capacity) + " (it received the first ones)");
}

}  // namespace kiln::detail
