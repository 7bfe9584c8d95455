// SPDX-License-Identifier: Apache-2.0
// The FFT's pipelined pair of passes: one kernel that does both passes of a line in chunks, the
// data between them in a ring small enough to stay in the L2 cache; its kernel, plan and launch.
#include <algorithm>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/algo/fft_kernels.hpp>
#include <kiln/detail/algo/fft_plan.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/detail/temporary_pool.hpp>
#include <kiln/runtime/program.hpp>
#include <string>

#include "codegen/device_vocabulary.hpp"
#include "fft_kernel_parts.hpp"

namespace kiln::detail {
namespace {

// A uint expression of the kernel's, for fft_pipeline_control's pointers.
struct uint_text {
    std::string text;
    friend uint_text operator/(const uint_text& a, std::size_t b) {
        return {a.text + " / " + std::to_string(b) + "u"};
    }
};

std::size_t tiles(std::size_t lines, std::size_t lines_per_group) {
    return (lines + lines_per_group - 1) / lines_per_group;
}

// Whether s1 and s2 are a line's first and last pass, both through local memory, one feeding
// the other (values: n, n / L, done, stride, table offset).
bool pairs(const fft_step& s1, const fft_step& s2) {
    const auto through_local = [](const fft_step& s) {
        return s.pass && !s.pass->direct && s.pass->exchange_rounds == 0 &&
               s.pass->radices.size() > 1 && !s.pipeline;
    };
    if (!through_local(s1) || !through_local(s2) || s1.target != s2.source) return false;
    const std::size_t l1 = s1.pass->length, l2 = s2.pass->length;
    return s1.values[0] == l1 * l2 && s2.values[0] == l1 * l2 && s1.values[2] == 1 &&
           s2.values[2] == l1 && s1.values[3] == 1 && s2.values[3] == 1 && s1.scale == 1 &&
           s1.pass->work_group_size == s2.pass->work_group_size &&
           s1.pass->inverse == s2.pass->inverse;
}

}  // namespace

std::size_t fft_pipeline_step::counters(std::size_t lines) const {
    return fft_pipeline_control<>{lines, chunks}.counters(kernel);
}

std::size_t fft_pipeline_step::ring_elements() const {
    return kernel.slots * kernel.chunk_lines * kernel.first.length * kernel.second.length;
}

std::vector<fft_step> fft_pipelined(const std::vector<fft_step>& steps,
                                    const fft_pipeline_policy& policy, std::size_t element_bytes) {
    if (!policy.chunk_bytes || policy.slots < 2) return steps;
    std::vector<fft_step> result;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i + 1 == steps.size() || !pairs(steps[i], steps[i + 1])) {
            result.push_back(steps[i]);
            continue;
        }
        const fft_step &s1 = steps[i], &s2 = steps[i + 1];
        fft_pipeline_kernel k{*s1.pass,
                              *s2.pass,
                              1,
                              policy.slots,
                              std::clamp<std::size_t>(policy.lag, 1, policy.slots - 1),
                              policy.target,
                              policy.streaming,
                              policy.fine};
        const std::size_t n = k.first.length * k.second.length;
        // Whole tiles per chunk, so that no tile straddles two chunks.
        k.chunk_lines = std::max<std::size_t>(policy.chunk_bytes / (n * element_bytes), 1);
        while ((k.chunk_lines * k.second.length) % k.first.lines_per_group != 0 ||
               (k.chunk_lines * k.first.length) % k.second.lines_per_group != 0)
            ++k.chunk_lines;
        const std::size_t lines = s1.work_items / k.second.length;
        const std::size_t chunks = (lines + k.chunk_lines - 1) / k.chunk_lines;
        if (chunks < 2) {
            result.push_back(s1);
            continue;
        }
        fft_step step{k.name(), s1.source, s2.target, s1.work_items, s1.values, s1.scale};
        step.pipeline = fft_pipeline_step{k, s2.values, s2.scale, chunks};
        result.push_back(std::move(step));
        ++i;
    }
    return result;
}

// A chunk of lines is chunk_lines x second.length lines of the first pass (one per element of
// the second pass's length) and chunk_lines x first.length of the second.
std::size_t fft_pipeline_kernel::first_tiles() const {
    return tiles(chunk_lines * second.length, first.lines_per_group);
}
std::size_t fft_pipeline_kernel::second_tiles() const {
    return tiles(chunk_lines * first.length, second.lines_per_group);
}

std::string fft_pipeline_kernel::name() const {
    return "kiln_fft_pipeline" + first.name().substr(13) + "_then" + second.name().substr(13) +
           "_c" + std::to_string(chunk_lines) + "_s" + std::to_string(slots) + "_l" +
           std::to_string(lag) + "_v" + std::to_string(static_cast<int>(target.vocabulary)) +
           (streaming ? "_cs" : "") + (fine ? "_f" : "");
}

std::string fft_pipeline_kernel::key() const {
    return name() + " " + target.key();
}

kernel_description fft_pipeline_description(const fft_pipeline_kernel& kernel,
                                            bool double_precision, bool wide_index,
                                            bool reads_expression) {
    const fft_source::fft_types t = fft_source::types(double_precision, wide_index);
    kernel_description described =
        fft_source::step_kernel_description(kernel.name(), t, reads_expression);
    described.local(t.complex, "data").global(t.complex, "ring").global<std::uint32_t>("control");
    for (const char* p : {"b2", "c2", "e2"}) described.scalar(t.index, p, t.index_bytes());
    return described.scalar(t.real, "scale2", t.real_bytes()).scalar<std::uint32_t>("chunks");
}

std::size_t fft_pipeline_local_bytes(const fft_pipeline_kernel& kernel, bool double_precision) {
    return std::max(fft_pass_local_bytes(kernel.first, double_precision),
                    fft_pass_local_bytes(kernel.second, double_precision));
}

std::string fft_pipeline_source(const fft_pipeline_kernel& k, bool double_precision,
                                bool wide_index, const fft_input_writer* input) {
    using namespace fft_source;
    const fft_types t = types(double_precision, wide_index);
    const std::string& ix = t.index;
    const auto num = [](std::size_t v) { return std::to_string(v) + "u"; };
    source_builder b;
    define_helpers(b, t);
    use_device_vocabulary(b, k.target);
    if (k.streaming) use_streaming_vocabulary(b, k.target, t.complex);
    b.begin_kernel(k.name(), k.first.work_group_size);
    const std::optional<fft_input_text> input_text = declare_parameters(
        b, fft_pipeline_description(k, double_precision, wide_index, input != nullptr), input);
    b.begin_body();
    b.local_array("uint", "kiln_ticket", "1");
    b.line("const uint lid = " + source_builder::local_id() + ";");
    const std::size_t t1 = k.first_tiles(), t2 = k.second_tiles();
    const std::size_t n = k.first.length * k.second.length;
    // Tickets in rounds: the first `lag` rounds are chunks 0 to lag - 1's first-pass tiles;
    // round r >= lag chunk r's first-pass tiles (while r < chunks), then chunk r - lag's
    // second-pass tiles. A group waits only for tiles of earlier tickets, which started before
    // it: the second pass of chunk r - lag for the first pass of it, lag rounds before; the
    // first pass of chunk r for the second pass of chunk r - slots (slots > lag), which was in
    // round r - slots + lag.
    b.line("if (lid == 0) kiln_ticket[0] = atomic_inc(control);");
    b.local_barrier();
    b.line("const uint ticket = kiln_ticket[0];");
    b.line("const uint alone = min(chunks, " + num(k.lag) + "), mixed = chunks - alone;");
    b.line("uint chunk = ticket / " + num(t1) + ", tile = ticket % " + num(t1) + ";");
    b.line("bool second = false;");
    b.open("if (ticket >= alone * " + num(t1) + ")");
    b.line("const uint u = ticket - alone * " + num(t1) + ";");
    b.line("const uint round = u / " + num(t1 + t2) + ", v = u % " + num(t1 + t2) + ";");
    b.line("second = round >= mixed || v >= " + num(t1) + ";");
    b.line("const uint w = u - mixed * " + num(t1 + t2) + ";");
    b.line("chunk = round >= mixed ? mixed + w / " + num(t2) +
           " : second ? round : alone + round;");
    b.line("tile = round >= mixed ? w % " + num(t2) + " : second ? v - " + num(t1) + " : v;");
    b.close();
    // The group's lines of its pass, and (fine) the arrays of n they lie in.
    const std::size_t l1 = k.first.length, l2 = k.second.length;
    const std::size_t g1 = k.first.lines_per_group, g2 = k.second.lines_per_group;
    b.line("const " + ix + " count2 = count / " + num(l2) + " * " + num(l1) + ";");
    b.line("const " + ix + " tile_first = second ? (" + ix + ")chunk * " + num(k.chunk_lines * l1) +
           " + (" + ix + ")tile * " + num(g2) + " : (" + ix + ")chunk * " +
           num(k.chunk_lines * l2) + " + (" + ix + ")tile * " + num(g1) + ";");
    b.line("const " + ix + " tile_end = second ? min(tile_first + " + num(g2) +
           ", count2) : min(tile_first + " + num(g1) + ", count);");
    b.line("const uint per_array = second ? " + num(l1) + " : " + num(l2) + ";");
    const fft_pipeline_control<uint_text> control{{"count"}, {"chunks"}};
    b.line("global uint* first_done = control + " + num(control.first_done) + ";");
    b.line("global uint* second_done = first_done + " + control.first_pass_counters(k).text + ";");
    // The second pass reads its lines once the first pass has written them (fine: its arrays'
    // lines; else every first-pass tile of its chunk); the first pass overwrites its slot once
    // the second pass has read what the slot held (chunk - slots).
    b.line("const uint slot = chunk % " + num(k.slots) + ";");
    b.open("if (lid == 0)");
    b.open("if (!second && chunk >= " + num(k.slots) + ")");
    b.line("while (*(volatile global uint*)(second_done + chunk - " + num(k.slots) + ") < " +
           num(t2) + ") {}");
    b.close();
    if (k.fine) {
        b.open("if (second)");
        b.line("for (uint array = tile_first / " + num(l1) + "; array * " + num(l1) +
               " < tile_end; ++array) while (*(volatile global uint*)(first_done + array) < " +
               num(l2) + ") {}");
        b.close();
    } else {
        b.line("if (second) while (*(volatile global uint*)(first_done + chunk) < " + num(t1) +
               ") {}");
    }
    b.line("kiln_fence_acq_rel();");
    b.close();
    b.line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
    // Ring positions: chunk r's lines lie at slot r mod slots; the shift wraps (unsigned) when
    // the slot is below the chunk.
    const std::string shift = "(" + ix + ")slot * " + num(k.chunk_lines * n) + " - (" + ix +
                              ")chunk * " + num(k.chunk_lines * n);
    b.line("const " + ix + " ring_shift = " + shift + ";");
    b.open("if (!second)");
    b.line("const " + ix + " first = tile_first;");
    b.line("global " + t.complex + "* out = ring;");
    write_pass_body(b, t, k.first, input_text ? &*input_text : nullptr,
                    {"", "ring_shift", k.streaming, false});
    b.close();
    b.open("else");
    b.line("const " + ix + " first = tile_first;");
    b.line("global const " + t.complex + "* in = ring;");
    b.line("const " + ix + " count = count2, b = b2, c = c2, e = e2;");
    b.line("const " + t.real + " scale = scale2;");
    write_pass_body(b, t, k.second, nullptr, {"ring_shift", "", false, k.streaming});
    b.close();
    // Every work-item's writes, then the group's signal behind a device-wide fence.
    b.line("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
    b.open("if (lid == 0)");
    b.line("kiln_fence_acq_rel();");
    b.line("if (second) atomic_inc(second_done + chunk);");
    if (k.fine)
        b.line("else for (" + ix + " line = tile_first; line < tile_end;) { const " + ix +
               " next = min((line / per_array + 1u) * per_array, tile_end); atomic_add("
               "first_done + line / per_array, (uint)(next - line)); line = next; }");
    else
        b.line("else atomic_inc(first_done + chunk);");
    // The last group to finish sets the counters back to zero for the queue's next launch
    // (every other group is past its last use of them).
    b.line("kiln_ticket[0] = atomic_inc(control + 1u) + 1u == chunks * " + num(t1 + t2) + ";");
    b.close();
    b.local_barrier();
    b.line("const uint counters = (uint)(second_done - control) + chunks;");
    b.line("if (kiln_ticket[0]) for (uint i = lid; i < counters; i += " +
           num(k.first.work_group_size) + ") control[i] = 0;");
    b.end_kernel();
    return b.str();
}

std::size_t fft_plan::counter_queues() const {
    std::lock_guard lock(counters_mutex_);
    return counters_.size();
}

event fft_plan::launch_pipeline(const queue& q, const fft_step& step, kernel_binding args,
                                const buffer_storage& target, const event& after,
                                const algorithm_program& program) const {
    const fft_pipeline_step& pipeline = *step.pipeline;
    const fft_pipeline_kernel& k = pipeline.kernel;
    // The ring lives until the launch is done (the lease returns after it).
    temporary_lease ring = temporary_pool::acquire(q, pipeline.ring_elements() * element_bytes_);
    const std::size_t counters = pipeline.counters(step.work_items);
    std::unique_lock lock(counters_mutex_);
    std::erase_if(counters_, [](const auto& entry) { return entry.second.queue.expired(); });
    queue_counters& held = counters_[q.identity()];
    if (held.counters.size() < counters) {
        buffer<std::uint32_t> zeroed(q, counters);
        held = {q.watch(), zeroed, zeroed.fill(q, 0, 0, counters, held.last)};
    }
    bind_step(args, step, target, step.values);
    args.local("data", fft_pipeline_local_bytes(k, shape_.double_precision))
        .argument("ring", storage_argument(ring.bytes().storage()))
        .buffer("control", held.counters)
        .scalar("chunks", static_cast<std::uint32_t>(pipeline.chunks));
    bind_index(args, "b2", pipeline.second_values[1]);
    bind_index(args, "c2", pipeline.second_values[2]);
    bind_index(args, "e2", pipeline.second_values[4]);
    bind_real(args, "scale2", pipeline.second_scale);
    const std::size_t group = k.first.work_group_size;
    const std::size_t groups = pipeline.chunks * (k.first_tiles() + k.second_tiles());
    // Enqueued under the lock: on an out-of-order queue each launch waits for the one before
    // it to have finished with the counters, so held.last must follow the order of enqueueing.
    const event done =
        program.bind(std::move(args))
            .launch(q, groups * group, group, {},
                    q.options().out_of_order ? wait_list{after, held.last} : wait_list{after});
    held.last = q.options().out_of_order ? done : event{};  // in order: nothing to wait for
    lock.unlock();
    ring.release_after(q, done);
    return done;
}

}  // namespace kiln::detail
