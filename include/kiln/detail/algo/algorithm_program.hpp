// SPDX-License-Identifier: Apache-2.0
// Programs of several algorithm kernels, cached per device under run-time keys.
//
// An algorithm's passes (e.g. reduce, scan of tile sums, downsweep) share helpers and live in
// one program. Which program is needed is known only at run time: the element types, the
// operation and the tuning values chosen for the device. The key says all of that in a short
// string; the source is generated only when the key is missed on a device, then built through
// kiln::program (and so kiln's memory and disk compile caches).
#pragma once
#pragma GCC visibility push(default)

#include <cstddef>
#include <functional>
#include <kiln/detail/kernel_description.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/program.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::detail {

/// One built program and its kernels, created once.
class algorithm_program {
  public:
    algorithm_program(kiln::program built, const std::vector<std::string>& kernel_names);
    /// A program whose kernels are described: they are launched through bindings checked
    /// against their descriptions.
    algorithm_program(kiln::program built, std::vector<kernel_description> kernels);
    /// Throws kiln::error for a name the program was not created with.
    const kiln::kernel& kernel(std::string_view name) const;
    /// The description of kernel `name`; throws invalid_argument_error for a kernel the program
    /// was not created with a description of.
    const kernel_description& description(std::string_view name) const;
    /// An empty binding for kernel `name` (description(name)).
    kernel_binding binding(std::string_view name) const {
        return kernel_binding(description(name));
    }
    /// The kernel `arguments` were bound for, with them.
    bound_kernel bind(kernel_binding&& arguments) const;

  private:
    kiln::program program_;
    std::vector<std::pair<std::string, kiln::kernel>> kernels_;
    std::vector<kernel_description> descriptions_;
};

/// The program under `key` on `dev`, generating its source with generate() on a miss. The key
/// must determine the source: algorithm, types, operation, tuning values. Thread-safe.
const algorithm_program& algorithm_program_for(const device& dev, const std::string& key,
                                               const std::vector<std::string>& kernel_names,
                                               const std::function<std::string()>& generate);
/// The same for a program of described kernels, whose generator declares their parameters from
/// the descriptions that describe() gives (called on a miss too), built with `options` (which
/// `key` must determine).
const algorithm_program& algorithm_program_for(
    const device& dev, const std::string& key,
    const std::function<std::vector<kernel_description>()>& describe,
    const std::function<std::string()>& generate, const std::string& options = {});

/// Programs generated so far in this process (misses), for tests of the cache.
std::size_t algorithm_programs_generated();
/// Forgets every algorithm program (the compile caches stay).
void clear_algorithm_programs();

}  // namespace kiln::detail
#pragma GCC visibility pop
