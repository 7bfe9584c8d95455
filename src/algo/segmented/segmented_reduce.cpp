// The segmented module's entry for kiln::segmented_reduce: the checks of its typed input, the
// dispatch to the strategy its plan chooses, and the error that names the first bad offset the
// kernels found.
#include <cstdint>
#include <cstring>
#include <kiln/algo/segmented.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/error.hpp>
#include <string>

#include "segmented_kernels.hpp"
#include "segmented_plan.hpp"

namespace kiln::detail {
namespace {

/// The status the kernels leave where every segment's offsets are good.
constexpr std::uint32_t all_good = UINT32_MAX;

std::string named(const device& dev) {
    return dev.name() + " (device " + std::to_string(dev.index()) + ")";
}

void check(const segmented_input& input) {
    const std::string out_size = std::to_string(input.out_size);
    if (input.offset_count != input.out_size + 1)
        throw invalid_argument_error(
            input.call,
            "offsets has " + std::to_string(input.offset_count) + " entries and out " + out_size +
                ": offsets needs out.size() + 1 = " + std::to_string(input.out_size + 1) +
                " (segment i runs from offsets[i] to offsets[i + 1])");
    if (input.out_size >= all_good)
        throw invalid_argument_error(input.call,
                                     "out has " + out_size + " segments, more than 2^32 - 2");
    const struct {
        const char* name;
        const layout* parts;
    } vectors[] = {
        {"x", input.x_parts}, {"offsets", input.offsets_parts}, {"out", input.out_parts}};
    for (const auto& v : vectors)
        if (v.parts->size() > 1)
            throw invalid_argument_error(input.call, std::string(v.name) + " is split over " +
                                                         std::to_string(v.parts->size()) +
                                                         " devices; it must lie on one");
    const device& home = (*input.offsets_parts)[0].queue.device();
    for (const auto& v : vectors)
        if (!v.parts->empty() && !((*v.parts)[0].queue.device() == home))
            throw invalid_argument_error(
                input.call, std::string(v.name) + " is on " + named((*v.parts)[0].queue.device()) +
                                ", offsets on " + named(home) + ": they must be on one device");
}

std::string first_offset_error(const std::string& first) {
    return "offsets[0] = " + first + ": the first offset must be 0";
}

/// offsets[k] as the caller wrote it, read from the device.
std::string offset_text(const segmented_input& input, const queue& q, std::size_t k) {
    std::uint64_t bits = 0;
    input.offsets_storage->read_bytes(q, k * input.offset_bytes, &bits, input.offset_bytes, {},
                                      true);
    if (!input.offsets_signed) return std::to_string(bits);
    if (input.offset_bytes == 4) {
        std::int32_t value = 0;
        std::memcpy(&value, &bits, sizeof value);
        return std::to_string(value);
    }
    return std::to_string(static_cast<std::int64_t>(bits));
}

/// Why segment s's offsets are bad, which a kernel found.
std::string bad_offsets(const segmented_input& input, const queue& q, std::size_t s) {
    const std::string first = offset_text(input, q, s), second = offset_text(input, q, s + 1);
    const std::string at = "offsets[" + std::to_string(s) + "] = " + first;
    const std::string next = "offsets[" + std::to_string(s + 1) + "] = " + second;
    if (s == 0 && first != "0") return first_offset_error(first);
    if (second.front() != '-' && first.front() != '-' && std::stoull(second) >= std::stoull(first))
        return next + " is past x's " + std::to_string(input.elements) + " elements";
    return next + " is below " + at + ": offsets must not decrease";
}

}  // namespace

void run_segmented_reduce(const segmented_input& input) {
    check(input);
    const queue& q = (*input.offsets_parts)[0].queue;
    if (input.out_size == 0) {
        // No kernel to check the one offset: it is read, a few bytes.
        if (const std::string first = offset_text(input, q, 0); first != "0")
            throw invalid_argument_error(input.call, first_offset_error(first));
        return;
    }
    temporary_lease status = temporary_pool::acquire(q, sizeof all_good);
    event done =
        status.bytes().storage().fill_bytes(q, 0, &all_good, sizeof all_good, sizeof all_good, {});
    const segmented_plan plan =
        plan_segmented(q.device().properties(), {.elements = input.elements,
                                                 .segments = input.out_size,
                                                 .forced = segmented_strategy_in_force(),
                                                 .tuning = segmented_tuning_in_force()});
    switch (plan.strategy) {
        case segmented_strategy::cpu_chunks:
            done = run_cpu_chunks_segmented(q, input, plan, status.bytes(), done);
            break;
        case segmented_strategy::thread_per_segment:
            done = run_thread_per_segment(q, input, plan, status.bytes(), done);
            break;
        case segmented_strategy::automatic:
        case segmented_strategy::team_per_segment:
            done = run_team_per_segment(q, input, plan, status.bytes(), done);
            break;
    }
    std::uint32_t first_bad = all_good;
    status.bytes().storage().read_bytes(q, 0, &first_bad, sizeof first_bad, {done}, true);
    status.release_after(q, done);
    if (first_bad != all_good)
        throw invalid_argument_error(input.call, bad_offsets(input, q, first_bad));
}

}  // namespace kiln::detail
