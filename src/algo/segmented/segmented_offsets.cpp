// SPDX-License-Identifier: Apache-2.0
// What the segmented module's entries share around their strategies (segmented_offsets.hpp).
#include "segmented_offsets.hpp"

#include <cstdint>
#include <cstring>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <string>

namespace kiln::detail {
namespace {

/// The status the kernels leave where every segment's offsets are good.
constexpr std::uint32_t all_good = UINT32_MAX;

std::string named(const device& dev) {
    return dev.name() + " (device " + std::to_string(dev.index()) + ")";
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

void check_one_device(const segmented_input& input) {
    if (input.segments >= all_good)
        throw invalid_argument_error(
            input.call, std::to_string(input.segments) + " segments, more than 2^32 - 2");
    const struct {
        const char* name;
        const layout* parts;
    } vectors[] = {
        {"x", input.x_parts}, {"offsets", input.offsets_parts}, {input.out_name, input.out_parts}};
    for (const auto& v : vectors)
        if (v.parts->size() > 1)
            throw invalid_argument_error(input.call, std::string(v.name) + " is split over " +
                                                         std::to_string(v.parts->size()) +
                                                         " devices; it must lie on one");
    if (input.out_storage != nullptr && input.out_storage == input.offsets_storage)
        throw invalid_argument_error(input.call,
                                     std::string(input.out_name) +
                                         " is offsets: the kernels read the offsets while they "
                                         "write it; write into another vector");
    const device& home = (*input.offsets_parts)[0].queue.device();
    for (const auto& v : vectors)
        if (!v.parts->empty() && !((*v.parts)[0].queue.device() == home))
            throw invalid_argument_error(
                input.call, std::string(v.name) + " is on " + named((*v.parts)[0].queue.device()) +
                                ", offsets on " + named(home) + ": they must be on one device");
}

void run_checking_offsets(segmented_algorithm algorithm, const segmented_input& input,
                          const segmented_launch& launch) {
    refuse_inside_capture(input.call,
                          "it checks the offsets on the device and reads the check back, to "
                          "throw for bad offsets before it returns");
    const queue& q = (*input.offsets_parts)[0].queue;
    if (input.segments == 0) {
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
                                                 .segments = input.segments,
                                                 .algorithm = algorithm,
                                                 .value_bytes = input.value_bytes,
                                                 .reproducible_sum = input.reproducible_sum,
                                                 .forced = segmented_strategy_in_force(),
                                                 .tuning = segmented_tuning_in_force(),
                                                 .overrides = shared_overrides_in_force()});
    done = launch(q, plan, status.bytes(), done);
    std::uint32_t first_bad = all_good;
    status.bytes().storage().read_bytes(q, 0, &first_bad, sizeof first_bad, {done}, true);
    status.release_after(q, done);
    if (first_bad != all_good)
        throw invalid_argument_error(input.call, bad_offsets(input, q, first_bad));
}

}  // namespace kiln::detail
