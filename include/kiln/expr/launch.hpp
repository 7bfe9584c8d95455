// SPDX-License-Identifier: Apache-2.0
// Generated kernels: launch geometry chosen per device, and a per-expression-type kernel cache.
//
// Each distinct statement type (assignment or reduction of one expression type) owns one
// kernel_cache, a function-local static. Its first use on a device generates the source and
// builds it through kiln::program, which consults kiln's memory and disk caches; every later use
// on that device finds the kernel by comparing device handles: no source is regenerated or
// hashed in steady state.
#pragma once
#pragma GCC visibility push(default)

#include <array>
#include <cstddef>
#include <cstdint>
#include <kiln/detail/source_builder.hpp>
#include <kiln/runtime/device.hpp>
#include <kiln/runtime/event.hpp>
#include <kiln/runtime/program.hpp>
#include <kiln/runtime/queue.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

/// Counters of the expression kernels of this process, to see the cache work.
struct expression_statistics {
    std::size_t sources_generated = 0;  ///< kernels generated and built (once per type and device)
    std::size_t launches = 0;           ///< generated kernels enqueued
};

namespace expression_cache {
/// The counters since the process started.
expression_statistics stats();
/// Forgets every generated kernel (the program caches stay), e.g. to time a first launch.
void clear();
}  // namespace expression_cache

namespace detail {

/// How generated kernels are launched on a kind of device. Tuning as data: plan_elementwise_launch
/// (kiln/expr/launch_plan.hpp) has the numbers and where they come from.
struct launch_policy {
    loop_style loop = loop_style::strided;
    std::size_t work_group_size = 256;
    /// Upper bound on work-groups per compute unit; more elements are covered by looping.
    std::size_t groups_per_compute_unit = 16;
    /// Bytes per step of a chunked loop's vector form (16 floats or 8 doubles at 64), for the
    /// statements that have one (has_vector_form, kiln/expr/core.hpp); 0 for none. Strided
    /// loops have none.
    std::size_t vector_bytes = 0;
    /// Strided loops: the 1-D stencils of a statement as constants of its kernel (width, centre,
    /// coefficients read once per work-item) and in lanes, each step of wide accesses loading the
    /// window of its outputs once (stencil_windows, kiln/stencil.hpp). Off: every element calls
    /// the stencil's function with its run-time width and reads its coefficients again.
    bool stencil_windows = false;
};
launch_policy launch_policy_for(const device& dev);

/// Test-only: while alive, every device uses `policy`, so that tests can run the GPU kernel
/// shapes on a CPU device. Clears the expression kernels when it starts and when it ends (they
/// were built for the other policy), and restores the policy in force before it.
class scoped_launch_policy {
  public:
    explicit scoped_launch_policy(launch_policy policy);
    ~scoped_launch_policy();
    scoped_launch_policy(const scoped_launch_policy&) = delete;
    scoped_launch_policy& operator=(const scoped_launch_policy&) = delete;

  private:
    std::optional<launch_policy> previous_;
};

/// One generated kernel built for one device.
class generated_kernel {
  public:
    generated_kernel(kiln::kernel kernel, const device& dev, const launch_policy& policy);

    std::size_t work_group_size() const noexcept { return work_group_size_; }
    /// The arguments every launch passes.
    std::size_t parameter_count() const noexcept { return parameter_count_; }
    /// Work-groups for `n` elements: enough for all of them, at most the policy's cap.
    std::size_t groups_for(std::size_t n) const noexcept;
    /// Enqueues `groups` work-groups with `args`, of the kinds and types its statement type
    /// always passes. It returns no event: the statements that launch it wait for nothing but
    /// the queue's order (repeated_launch).
    void launch(const queue& q, std::size_t groups, std::span<const kernel_argument> args) const;

  private:
    repeated_launch launch_;
    std::size_t work_group_size_;
    std::size_t max_groups_;
    std::size_t parameter_count_;
};

class kernel_cache {
  public:
    kernel_cache();
    ~kernel_cache();
    kernel_cache(const kernel_cache&) = delete;
    kernel_cache& operator=(const kernel_cache&) = delete;

    /// The kernel for `dev`, generating its source with generate(launch_policy) or
    /// generate(loop_style) on first use. `variant` tells apart the kernels of one statement type
    /// whose text also depends on run-time values (a stencil's width and centre).
    template <class Generate>
    const generated_kernel& get(const device& dev, std::string_view kernel_name,
                                Generate&& generate, std::string_view variant = {}) {
        std::lock_guard lock(mutex_);
        for (const auto& [known, kernel] : kernels_)
            if (known.first == dev && known.second == variant) return *kernel;
        const launch_policy policy = launch_policy_for(dev);
        if constexpr (std::is_invocable_v<Generate&, const launch_policy&>)
            return build(dev, variant, kernel_name, generate(policy), policy);
        else
            return build(dev, variant, kernel_name, generate(policy.loop), policy);
    }
    void clear();

  private:
    const generated_kernel& build(const device& dev, std::string_view variant,
                                  std::string_view kernel_name, const std::string& source,
                                  const launch_policy& policy);

    std::mutex mutex_;
    std::vector<std::pair<std::pair<device, std::string>, std::unique_ptr<generated_kernel>>>
        kernels_;
};

/// How a generated kernel takes its arguments on OpenCL: buffer arguments that are ranges of
/// one allocation (the components of a kiln::multivector) as the allocation, passed once, and
/// the distance between its ranges, where each range is its size rounded up to the device's
/// base alignment (as a multivector lays them out); and its scalars of 1, 2, 4 or 8 bytes as
/// one struct, where there are at least three or any allocation. NVIDIA's OpenCL charges every
/// launch for each argument it passes, changed or not: about 0.4 us a buffer and 0.05 us a scalar,
/// where a struct of 40 scalars costs as little as one (docs/dev/benchmark-notes.md, "Current:
/// small operations"). CUDA's launches cost the same whatever their buffers, and a capture
/// watches each buffer it records (a component resized after it), so there arguments stay as
/// they are. Which range of which allocation each argument is changes the kernel's text, so it
/// is part of the kernel's variant.
class packed_arguments {
  public:
    explicit packed_arguments(const device& dev);
    ~packed_arguments();
    packed_arguments(const packed_arguments&) = delete;
    packed_arguments& operator=(const packed_arguments&) = delete;

    /// The launch's next argument, in the order of the kernel's parameters.
    void add(const kernel_argument& arg) {
        if (active_) note(arg);
    }
    /// The kernel's variant: `statement_variant` (what else its text depends on), then how each
    /// argument is passed, where any is passed otherwise than as itself.
    std::string_view variant(std::string_view statement_variant);
    /// Declares how the arguments are passed on `builder`, whose parameters are the arguments'
    /// (in order), before its begin_body().
    void declare(source_builder& builder) const;
    /// Makes the arguments added (taken by the launch) those of the kernel that declare() wrote.
    void pass(std::vector<kernel_argument>& args) const;

  private:
    void note(const kernel_argument& arg);
    void add_member(std::size_t size);

    /// Whether arguments are passed otherwise (OpenCL, outside a capture).
    bool active_;
    std::size_t added_ = 0, scalars_ = 0;
    /// The end of the struct's last member, and its widest (its alignment), as note() lays it out.
    std::size_t scalars_end_ = 0, widest_member_ = 1;
    /// The first scalars' positions and sizes, recorded once a third scalar or a range comes.
    std::array<std::pair<std::size_t, std::size_t>, 2> waiting_{};
    /// Three bytes per argument: its allocation's number by first appearance (1 to 255; 0 for
    /// other arguments), its range's index in the allocation (0 to 255), and the bytes of a
    /// scalar passed in the struct (0 for arguments passed as themselves). Empty where every
    /// argument is passed as itself.
    std::vector<char> passed_;
    /// Per allocation numbered, its memory and the distance between its ranges.
    std::vector<std::pair<const void*, std::size_t>> allocations_;
    std::string variant_;
};

/// The kernel cache of one statement type.
template <class Statement>
kernel_cache& cache_for() {
    static kernel_cache cache;
    return cache;
}

}  // namespace detail
}  // namespace kiln
#pragma GCC visibility pop
