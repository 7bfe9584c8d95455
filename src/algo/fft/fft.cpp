// SPDX-License-Identifier: Apache-2.0
// kiln::fft plans: their programs and tables (steps from fft_steps.cpp), launches, the plan cache.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/algo/fft_tuning.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/error.hpp>
#include <kiln/runtime/graph.hpp>
#include <kiln/runtime/program.hpp>
#include <limits>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "fft_host_library.hpp"
#include "fft_steps.hpp"
#include "runtime/host_mapping.hpp"

namespace kiln::detail {
namespace {

std::atomic<bool> force_wide_indices{false};

bool wide_indices_forced() {
    return force_wide_indices.load(std::memory_order_relaxed);
}
std::atomic<bool> force_length_kernels{false};
std::atomic<fft_strategy> forced_strategy{fft_strategy::automatic};

/// The strategy in force: scoped_fft_strategy's, else KILN_FFT_STRATEGY's (`kernels` or `fftw`),
/// else automatic.
fft_strategy strategy_in_force(const char* call) {
    if (const fft_strategy forced = forced_strategy.load(); forced != fft_strategy::automatic)
        return forced;
    const char* text = std::getenv("KILN_FFT_STRATEGY");
    if (!text || !*text) return fft_strategy::automatic;
    const std::string_view name(text);
    if (name == "kernels") return fft_strategy::kernels;
    if (name == "fftw") return fft_strategy::host_library;
    throw invalid_argument_error(
        call, "KILN_FFT_STRATEGY is '" + std::string(name) + "'; it takes kernels or fftw");
}

/// Whether plans on `dev` may run on the host library: CPU devices whose memory is the host's.
bool host_library_reaches(const device& dev) {
    const device_properties& p = dev.properties();
    return p.type == device_type::cpu && p.unified_memory;
}
std::atomic<std::size_t> register_pass_limit{SIZE_MAX};
// The work-items per group a register pass's kernel takes: the backend's answer once built, or
// less under scoped_fft_register_pass_limit (alone where the plan runs on the host library, which
// builds no pass).
std::size_t register_pass_group_limit(const fft_step& step) {
    const std::size_t limit = register_pass_limit.load(std::memory_order_relaxed);
    return step.program ? std::min(step.program->kernel(step.kernel).max_work_group_size(), limit)
                        : limit;
}

std::string describe(const fft_shape& shape) {
    std::string text = shape.double_precision ? "double" : "float";
    for (std::size_t n : shape.sizes) text.append(" ").append(std::to_string(n));
    text.append(" x").append(std::to_string(shape.batch));
    return text.append(shape.inverse ? " inverse" : " forward");
}

/// Refuses a shape whose buffers q's device cannot allocate, before any table is computed: the
/// data (input, output and scratch each hold every element) and, for sizes that go through
/// Bluestein's algorithm, its work buffers, padded to a power of two of at least 2n - 1 per
/// line. Planning such a shape would fill the host with tables of as many elements or, past
/// 2^63, never end. `total` is the elements, known not to overflow.
void check_fits(const device& dev, const fft_shape& shape, std::size_t total, const char* call) {
    const device_properties& p = dev.properties();
    const std::size_t element_bytes = shape.double_precision ? 16 : 8;
    const std::uint64_t fitting = p.max_allocation_bytes / element_bytes;
    const auto refuse = [&](const std::string& needs, std::uint64_t elements) {
        const std::string bytes =
            elements > std::numeric_limits<std::uint64_t>::max() / element_bytes
                ? "more than 2^64"
                : std::to_string(elements * element_bytes);
        throw invalid_argument_error(
            call, "an FFT of " + describe(shape) + " needs " + needs + " of " +
                      std::to_string(elements) + " elements (" + bytes + " bytes), but " + p.name +
                      " allocates at most " + std::to_string(p.max_allocation_bytes) +
                      " bytes at once (global memory " + std::to_string(p.global_memory_bytes) +
                      " bytes)");
    };
    if (total > fitting) refuse("buffers", total);
    for (std::size_t n : shape.sizes) {
        if (n == 1 || fft_factor(n)) continue;
        // n <= total <= fitting < 2^61: neither 2n - 1 nor total / n * padded (at most 4 total)
        // wraps.
        const std::size_t padded = std::bit_ceil(2 * n - 1);
        const std::size_t work = total / n * padded;
        if (work > fitting)
            refuse("Bluestein work buffers (size " + std::to_string(n) + " padded to " +
                       std::to_string(padded) + ")",
                   work);
    }
}

}  // namespace

bool fft_length_kernels_forced() {
    return force_length_kernels.load(std::memory_order_relaxed);
}

scoped_wide_fft_indices::scoped_wide_fft_indices() : previous_(force_wide_indices.exchange(true)) {}
scoped_wide_fft_indices::~scoped_wide_fft_indices() {
    force_wide_indices.store(previous_);
}

scoped_fft_register_pass_limit::scoped_fft_register_pass_limit(std::size_t work_items)
    : previous_(register_pass_limit.exchange(work_items)) {}
scoped_fft_register_pass_limit::~scoped_fft_register_pass_limit() {
    register_pass_limit.store(previous_);
}

scoped_fft_length_kernels::scoped_fft_length_kernels()
    : previous_(force_length_kernels.exchange(true)) {}
scoped_fft_length_kernels::~scoped_fft_length_kernels() {
    force_length_kernels.store(previous_);
}

scoped_fft_strategy::scoped_fft_strategy(fft_strategy strategy)
    : previous_(forced_strategy.exchange(strategy)) {}
scoped_fft_strategy::~scoped_fft_strategy() {
    forced_strategy.store(previous_);
}

std::string fft_plan_key::key() const {
    const fft_pass_limits& p = policy.passes;
    const fft_pipeline_policy& pipe = policy.pipeline;
    std::string text = describe(shape) + " passes";
    for (std::size_t v : {p.local_bytes, p.local_elements, p.group_elements, p.work_group_size,
                          p.max_work_group_size, p.coalesced_lines})
        text += " " + std::to_string(v);
    text += std::string(p.double_precision ? " double" : "") +
            (p.radix_per_pass ? " radix_per_pass" : "") +
            (p.register_passes ? " register_passes" : "") + " pipeline " +
            std::to_string(pipe.chunk_bytes) + "x" + std::to_string(pipe.slots) + "x" +
            std::to_string(pipe.lag) + (pipe.streaming ? " streaming" : "") +
            (pipe.fine ? " fine" : "") + " " + pipe.target.key() + " steps " +
            std::to_string(policy.step_work_group_size);
    return text + (wide_indices ? " wide" : "") + (length_kernels ? " lengths" : "") +
           " register groups " + std::to_string(register_pass_limit) + " strategy " +
           std::to_string(static_cast<int>(strategy));
}

std::size_t fft_shape::elements() const {
    std::size_t total = batch;
    for (std::size_t n : sizes) total *= n;
    return total;
}

fft_plan::~fft_plan() = default;

fft_plan::fft_plan(const queue& q, const fft_plan_key& key)
    : shape_(key.shape), element_bytes_(shape_.double_precision ? 16 : 8) {
    const fft_policy& policy = key.policy;
    step_work_group_size_ = policy.step_work_group_size;
    if (key.strategy != fft_strategy::kernels && host_library_reaches(q.device()))
        host_library_ = fftw_transform::make(shape_, q.device().properties().compute_units);
    // Plans the steps under `limits` and builds their programs; returns the host tables.
    const auto plan = [&](const fft_pass_limits& limits) {
        fft_plan_builder builder(shape_, limits);
        std::vector<fft_stage> stages;
        const std::size_t elements = shape_.elements();
        std::size_t stride = 1;
        for (std::size_t d = shape_.sizes.size(); d-- > 0;) {
            const std::size_t n = shape_.sizes[d];
            const std::size_t lines = elements / n;
            const double scale = shape_.inverse ? 1.0 / double(n) : 1.0;
            if (n > 1) {
                if (fft_factor(n))
                    builder.add_passes(stages, n, stride, lines, shape_.inverse, scale,
                                       fft_buffer::input, fft_buffer::output, false);
                else
                    stages.push_back(builder.bluestein(n, stride, lines, scale));
            }
            stride *= n;
        }
        out_of_place_ = fft_pipelined(fft_chain(stages, false), policy.pipeline, element_bytes_);
        in_place_ = fft_pipelined(fft_chain(stages, true), policy.pipeline, element_bytes_);
        work_elements_ = builder.work_elements;

        wide_index_ =
            key.wide_indices || std::max({elements, work_elements_, builder.table.size()}) >
                                    std::size_t{0xffffffff} - step_work_group_size_;
        // On the host library the steps never run: no program is built for them (compiling them
        // made most of a cold first call on CPUs), and the element-wise one only for real
        // transforms' halves (element_program).
        if (host_library_) return std::move(builder.table);
        program_ = &element_program(q.device());
        const bool dp = shape_.double_precision;
        for (std::vector<fft_step>* steps : {&out_of_place_, &in_place_})
            for (fft_step& step : *steps)
                if (step.pipeline)
                    step.program = &algorithm_program_for(
                        q.device(),
                        fft_program_key{dp, wide_index_, step.pipeline->kernel.key(), {}}.key(),
                        [&]() -> std::vector<kernel_description> {
                            return {fft_pipeline_description(step.pipeline->kernel, dp, wide_index_,
                                                             false)};
                        },
                        [&] {
                            return fft_pipeline_source(step.pipeline->kernel, dp, wide_index_);
                        });
                else if (step.pass)
                    step.program = &algorithm_program_for(
                        q.device(), fft_program_key{dp, wide_index_, step.pass->key(), {}}.key(),
                        [&]() -> std::vector<kernel_description> {
                            return {fft_pass_description(*step.pass, dp, wide_index_, false)};
                        },
                        [&] { return fft_pass_source({*step.pass}, dp, wide_index_); });
        return std::move(builder.table);
    };
    fft_pass_limits limits = policy.passes;
    std::vector<complex_double> table = plan(limits);
    // A register pass's group must start whole: where the built kernel takes fewer work-items
    // than its group (NVIDIA's OpenCL said 256 of 512, docs/fft.md), the line takes the passes
    // through local memory instead.
    const bool register_passes_fit =
        std::all_of(out_of_place_.begin(), out_of_place_.end(), [](const fft_step& step) {
            return !step.pass || step.pass->exchange_rounds == 0 ||
                   register_pass_group_limit(step) >= step.pass->work_group_size;
        });
    if (!register_passes_fit) {
        limits.register_passes = false;
        table = plan(limits);
    }

    std::vector<std::byte> bytes(std::max<std::size_t>(table.size(), 1) * element_bytes_);
    for (std::size_t i = 0; i < table.size(); ++i) {
        const complex_double z = table[i];
        if (shape_.double_precision) {
            std::memcpy(bytes.data() + i * 16, &z, 16);
        } else {
            const std::complex<float> f(float(z.real()), float(z.imag()));
            std::memcpy(bytes.data() + i * 8, &f, 8);
        }
    }
    tables_ = buffer<std::byte>(q, bytes.size());
    tables_.write(q, std::span<const std::byte>(bytes));
}

event fft_plan::run(const queue& q, const buffer_storage& input,
                    const buffer_storage& output) const {
    const bool in_place = input.memory() == output.memory();
    if (host_library_) {
        refuse_inside_capture("kiln::fft",
                              "this plan transforms on the host with FFTW (the host-library "
                              "strategy, docs/fft.md), in the device's memory; a plan made with "
                              "KILN_FFT_STRATEGY=kernels runs kernels, which capture");
        // Synchronous: the host transforms the device's memory where it lies, after q's work.
        const std::size_t bytes = shape_.elements() * element_bytes_;
        host_mapping source(q, input, 0, bytes);
        if (in_place) {
            host_library_->execute(source.data(), source.data());
        } else {
            host_mapping target(q, output, 0, bytes);
            host_library_->execute(source.data(), target.data());
            target.unmap();
        }
        source.unmap();
        return q.marker();
    }
    return run_steps(q, in_place ? in_place_ : out_of_place_, &input, nullptr, output);
}

void fft_plan::wait_for_host_measuring() const {
    if (host_library_) host_library_->wait_for_measuring();
}

bool fft_plan::fuses_input() const noexcept {
    if (host_library_ || out_of_place_.empty()) return false;
    const fft_step& first = out_of_place_.front();
    return first.pass || first.pipeline || first.kernel == fft_chirp_in_kernel;
}

event fft_plan::run(const queue& q, const fft_input_expression& input,
                    const buffer_storage& output) const {
    if (!fuses_input())
        throw invalid_argument_error("kiln::fft",
                                     "this plan's first step cannot read an expression");
    return run_steps(q, out_of_place_, nullptr, &input, output);
}

// Steps reading fft_buffer::input read `input`, or, in its place, `expression` (only the first
// step of an out-of-place chain reads the input).
event fft_plan::run_steps(const queue& q, const std::vector<fft_step>& steps,
                          const buffer_storage* input, const fft_input_expression* expression,
                          const buffer_storage& output) const {
    const std::size_t bytes = shape_.elements() * element_bytes_;
    const auto uses = [&](fft_buffer b) {
        for (const fft_step& s : steps)
            if (s.source == b || s.target == b) return true;
        return false;
    };
    temporary_lease scratch[2], work[2];
    for (int i = 0; i < 2; ++i) {
        if (uses(fft_buffer(int(fft_buffer::scratch0) + i)))
            scratch[i] = temporary_pool::acquire(q, bytes);
        if (uses(fft_buffer(int(fft_buffer::work0) + i)))
            work[i] = temporary_pool::acquire(q, work_elements_ * element_bytes_);
    }
    const auto storage = [&](fft_buffer b) -> const buffer_storage& {
        switch (b) {
            case fft_buffer::input:
                return *input;
            case fft_buffer::output:
                return output;
            case fft_buffer::scratch0:
                return scratch[0].bytes().storage();
            case fft_buffer::scratch1:
                return scratch[1].bytes().storage();
            case fft_buffer::work0:
                return work[0].bytes().storage();
            default:
                return work[1].bytes().storage();
        }
    };
    event done;
    for (const fft_step& step : steps) {
        if (step.kernel.empty()) {
            done = storage(step.source).copy_bytes(q, 0, storage(step.target), 0, bytes, done);
            continue;
        }
        if (expression && step.source == fft_buffer::input) {
            // A radix pass, or Bluestein's chirp multiplication (fuses_input).
            const bool dp = shape_.double_precision;
            const fft_pipeline_kernel* pipeline = step.pipeline ? &step.pipeline->kernel : nullptr;
            const std::string kernel = pipeline    ? pipeline->key()
                                       : step.pass ? step.pass->key()
                                                   : step.kernel;
            const algorithm_program& program = algorithm_program_for(
                q.device(), fft_program_key{dp, wide_index_, kernel, expression->key}.key(),
                [&] {
                    return std::vector{
                        pipeline    ? fft_pipeline_description(*pipeline, dp, wide_index_, true)
                        : step.pass ? fft_pass_description(*step.pass, dp, wide_index_, true)
                                    : fft_step_description(step.kernel, dp, wide_index_, true)};
                },
                [&] {
                    return pipeline
                               ? fft_pipeline_source(*pipeline, dp, wide_index_, &expression->write)
                           : step.pass
                               ? fft_pass_source({*step.pass}, dp, wide_index_, &expression->write)
                               : fft_chirp_in_source(dp, wide_index_, expression->write);
                });
            kernel_binding args = program.binding(step.kernel);
            args.input(expression->arguments);
            done =
                step.pipeline
                    ? launch_pipeline(q, step, std::move(args), storage(step.target), done, program)
                    : launch(q, step, std::move(args), storage(step.target), done, program);
            continue;
        }
        if (step.pipeline) {
            kernel_binding args = step.program->binding(step.kernel);
            args.argument("in", storage_argument(storage(step.source)));
            done = launch_pipeline(q, step, std::move(args), storage(step.target), done,
                                   *step.program);
        } else {
            done = launch(q, step, storage(step.source), storage(step.target), done);
        }
    }
    for (temporary_lease* lease : {&scratch[0], &scratch[1], &work[0], &work[1]})
        if (!lease->empty()) lease->release_after(q, done);
    return done;
}

event fft_plan::launch(const queue& q, const fft_step& step, const buffer_storage& source,
                       const buffer_storage& target, const event& after) const {
    const algorithm_program& program = step.program ? *step.program : element_program(q.device());
    kernel_binding args = program.binding(step.kernel);
    args.argument("in", storage_argument(source));
    return launch(q, step, std::move(args), target, after, program);
}

const algorithm_program& fft_plan::element_program(const device& dev) const {
    if (program_) return *program_;
    const bool dp = shape_.double_precision;
    return algorithm_program_for(
        dev, fft_program_key{dp, wide_index_, {}, {}}.key(),
        [&] { return fft_step_descriptions(dp, wide_index_); },
        [&] { return fft_program_source(dp, wide_index_); });
}

void fft_plan::bind_index(kernel_binding& args, std::string_view slot, std::uint64_t value) const {
    if (wide_index_)
        args.scalar(slot, value);
    else
        args.scalar(slot, static_cast<std::uint32_t>(value));
}

void fft_plan::bind_real(kernel_binding& args, std::string_view slot, double value) const {
    if (shape_.double_precision)
        args.scalar(slot, value);
    else
        args.scalar(slot, static_cast<float>(value));
}

void fft_plan::bind_step(kernel_binding& args, const fft_step& step, const buffer_storage& target,
                         std::span<const std::uint64_t> values) const {
    args.argument("out", storage_argument(target))
        .argument("table", storage_argument(tables_.storage()));
    bind_index(args, fft_index_slots[0], step.work_items);
    for (std::size_t i = 0; i < values.size(); ++i)
        bind_index(args, fft_index_slots[i + 1], values[i]);
    bind_real(args, "scale", step.scale);
}

event fft_plan::launch(const queue& q, const fft_step& step, kernel_binding args,
                       const buffer_storage& target, const event& after,
                       const algorithm_program& program) const {
    // Every step kernel takes the five integer parameters, whichever of them it uses.
    std::array<std::uint64_t, std::size(fft_index_slots) - 1> values{};
    std::copy_n(step.values.begin(), std::min(values.size(), step.values.size()), values.begin());
    bind_step(args, step, target, values);
    if (step.pass)
        if (const std::size_t bytes = fft_pass_local_bytes(*step.pass, shape_.double_precision))
            args.local("data", bytes);
    const std::size_t group = step.pass ? step.pass->work_group_size : step_work_group_size_;
    const std::size_t per_group = step.pass ? step.pass->lines_per_group : step_work_group_size_;
    const std::size_t global = (step.work_items + per_group - 1) / per_group * group;
    return program.bind(std::move(args)).launch(q, global, group, {}, after);
}

// The sizes of a real transform's arrays: d x c x n, n contiguous, half = n / 2 + 1.
struct real_layout {
    std::size_t n, half, c, d;
    explicit real_layout(const fft_shape& shape)
        : n(shape.sizes.back()),
          half(n / 2 + 1),
          c(shape.sizes.size() >= 2 ? shape.sizes[shape.sizes.size() - 2] : 1),
          d(shape.sizes.size() == 3 ? shape.sizes[0] : 1) {}
};

event fft_plan::keep_half(const queue& q, const buffer_storage& full, const buffer_storage& half,
                          const event& after) const {
    const real_layout l(shape_);
    const std::size_t lines = shape_.elements() / l.n;
    return launch(q, {fft_half_kernel, {}, {}, lines * l.half, {l.n, l.half}, 1.0}, full, half,
                  after);
}

event fft_plan::expand_half(const queue& q, const buffer_storage& half,
                            const buffer_storage& full) const {
    const real_layout l(shape_);
    return launch(q, {fft_expand_kernel, {}, {}, shape_.elements(), {l.n, l.half, l.c, l.d}, 1.0},
                  half, full, {});
}

event fft_plan::expand_half(const queue& q, const fft_input_expression& half,
                            const buffer_storage& full) const {
    const real_layout l(shape_);
    const bool dp = shape_.double_precision;
    const algorithm_program& program = algorithm_program_for(
        q.device(), fft_program_key{dp, wide_index_, fft_expand_kernel, half.key}.key(),
        [&] { return std::vector{fft_step_description(fft_expand_kernel, dp, wide_index_, true)}; },
        [&] { return fft_expand_source(dp, wide_index_, half.write); });
    kernel_binding args = program.binding(fft_expand_kernel);
    args.input(half.arguments);
    return launch(q, {fft_expand_kernel, {}, {}, shape_.elements(), {l.n, l.half, l.c, l.d}, 1.0},
                  std::move(args), full, {}, program);
}

std::shared_ptr<const fft_plan> fft_plan::make(const queue& q, const fft_shape& shape,
                                               const char* call) {
    if (shape.sizes.empty() || shape.sizes.size() > 3)
        throw invalid_argument_error(
            call, "an FFT has 1, 2 or 3 sizes, not " + std::to_string(shape.sizes.size()));
    std::size_t total = shape.batch;
    for (std::size_t n : shape.sizes) {
        if (n == 0 || total == 0)
            throw invalid_argument_error(
                call, "FFT sizes and batch must not be zero (" + describe(shape) + ")");
        if (total > std::numeric_limits<std::size_t>::max() / n)
            throw invalid_argument_error(call, "FFT too large: " + describe(shape));
        total *= n;
    }
    if (shape.double_precision && !q.device().properties().double_precision)
        throw invalid_argument_error(call,
                                     "the device has no double precision: " + q.device().name());
    check_fits(q.device(), shape, total, call);

    const fft_strategy strategy = strategy_in_force(call);
    const fft_plan_key plan_key{shape,
                                plan_fft(q.device(), shape.double_precision),
                                wide_indices_forced(),
                                fft_length_kernels_forced(),
                                register_pass_limit.load(),
                                strategy};
    static std::mutex mutex;
    static std::map<std::pair<const void*, std::string>, std::weak_ptr<const fft_plan>> plans;
    const auto key = std::make_pair(q.device().identity(), plan_key.key());
    std::lock_guard lock(mutex);
    if (auto found = plans.find(key); found != plans.end())
        if (auto plan = found->second.lock()) return plan;
    auto plan = std::make_shared<const fft_plan>(q, plan_key);
    std::erase_if(plans, [](const auto& entry) { return entry.second.expired(); });
    plans[key] = plan;
    return plan;
}

}  // namespace kiln::detail
