// SPDX-License-Identifier: Apache-2.0
// The profiler (docs/profiling.md): the trace's events, parsed with a real JSON library, against
// what each test launched on every device; the summary; regions; builds and their cache level;
// several threads; and KILN_PROFILE itself in a child process: a file, the summary, an unwritable
// path, and what must not be replaced (streams, links, read-only files, planted temporary names).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <kiln/detail/profiling.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/test_helpers.hpp"
#include "support/device_param.hpp"

namespace {

using nlohmann::json;

class profiler : public kiln::test::device_test {};

const std::string scale_source = R"(
kernel void scale(global float* x, float by) {
    size_t i = get_global_id(0);
    x[i] *= by;
}
)";

/// The complete ("X") events of a trace whose category is `category`, in the trace's order.
std::vector<json> spans(const json& trace, const std::string& category) {
    std::vector<json> found;
    for (const json& e : trace.at("traceEvents"))
        if (e.at("ph") == "X" && e.at("cat") == category) found.push_back(e);
    return found;
}

/// The name a metadata event gives to a process (tid 0) or a thread.
std::string name_of(const json& trace, const char* what, int pid, int tid = 0) {
    for (const json& e : trace.at("traceEvents"))
        if (e.at("ph") == "M" && e.at("name") == what && e.at("pid") == pid &&
            (std::string(what) == "process_name" || e.at("tid") == tid))
            return e.at("args").at("name");
    return {};
}

double end_of(const json& span) {
    return span.at("ts").get<double>() + span.at("dur").get<double>();
}

TEST_P(profiler, every_command_is_an_event_on_its_device_and_queue_track) {
    kiln::detail::profiling::scoped_session session;
    // [doc:profile-queue]
    kiln::queue q(device());  // profiled while KILN_PROFILE records, whatever its options say
    // [/doc]
    ASSERT_TRUE(q.options().profiling);
    auto scale = kiln::program(device(), scale_source).kernel("scale");
    const std::size_t n = 1024;
    const std::size_t group = std::min<std::size_t>(64, scale.max_work_group_size());
    kiln::buffer<float> x(q, std::vector<float>(n, 1.0f));  // one blocking write
    kiln::buffer<float> y(q, n);
    for (int i = 0; i < 3; ++i) scale(x, 2.0f).launch(q, {n}, {group});
    scale(x, 0.5f).launch(q, {n});  // the device chooses the work-group size
    y.fill(q, 7.0f);
    x.copy_to(q, y);
    std::vector<float> back(n);
    x.read_async(q, 0, back);
    q.finish();

    const json trace = json::parse(session.trace_json());
    const auto kernels = spans(trace, "kernel");
    ASSERT_EQ(kernels.size(), 4u);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        EXPECT_EQ(kernels[i].at("name"), "scale");
        EXPECT_EQ(kernels[i].at("args").at("global"), json::array({n}));
        if (i < 3)
            EXPECT_EQ(kernels[i].at("args").at("local"), json::array({group}));
        else
            EXPECT_TRUE(kernels[i].at("args").at("local").is_null());
        EXPECT_GE(kernels[i].at("args").at("device_ns").get<double>(), 0.0);
    }
    const auto transfers = spans(trace, "transfer");
    ASSERT_EQ(transfers.size(), 2u);
    EXPECT_EQ(transfers[0].at("name"), "write");
    EXPECT_EQ(transfers[0].at("args").at("direction"), "host to device");
    EXPECT_EQ(transfers[0].at("args").at("blocking"), true);
    EXPECT_EQ(transfers[1].at("name"), "read");
    EXPECT_EQ(transfers[1].at("args").at("direction"), "device to host");
    EXPECT_EQ(transfers[1].at("args").at("blocking"), false);
    for (const json& t : transfers) {
        EXPECT_EQ(t.at("args").at("bytes"), n * sizeof(float));
        EXPECT_TRUE(t.at("args").at("GB/s").is_number());
    }
    const auto fills = spans(trace, "fill"), copies = spans(trace, "copy");
    ASSERT_EQ(fills.size(), 1u);
    ASSERT_EQ(copies.size(), 1u);
    EXPECT_EQ(fills[0].at("args").at("bytes"), n * sizeof(float));
    EXPECT_EQ(copies[0].at("args").at("direction"), "device to device");

    // One track: this device's process, the queue's thread; in order, the commands follow one
    // another on the host's timeline in the order they were enqueued.
    std::vector<json> device_events = {transfers[0]};
    device_events.insert(device_events.end(), kernels.begin(), kernels.end());
    device_events.insert(device_events.end(), {fills[0], copies[0], transfers[1]});
    const int pid = device_events[0].at("pid"), tid = device_events[0].at("tid");
    EXPECT_NE(name_of(trace, "process_name", pid).find(device().name()), std::string::npos);
    EXPECT_EQ(name_of(trace, "thread_name", pid, tid), "queue 1 (in order)");
    for (std::size_t i = 0; i < device_events.size(); ++i) {
        EXPECT_EQ(device_events[i].at("pid"), pid);
        EXPECT_EQ(device_events[i].at("tid"), tid);
        EXPECT_GE(device_events[i].at("ts").get<double>(), 0.0);
        if (i > 0) {  // 1 us of slack: CUDA's event times are float milliseconds
            EXPECT_GE(device_events[i].at("ts").get<double>() + 1.0, end_of(device_events[i - 1]))
                << device_events[i - 1] << " then " << device_events[i];
        }
    }
    // The host waited for the blocking write and for finish(), on its own lane.
    const auto waits = spans(trace, "wait");
    ASSERT_GE(waits.size(), 2u);
    EXPECT_EQ(waits.front().at("name"), "blocking write");
    EXPECT_EQ(waits.back().at("name"), "queue::finish");
    EXPECT_EQ(name_of(trace, "process_name", waits.front().at("pid")), "host");
    // The command ends before the host stops waiting for it: device times are placed on the
    // host's clock. 50 us of slack: the CUDA backend places its times from a reference event's
    // host time, taken just after the reference completed, so they may be late by that much.
    constexpr double cross_clock_slack_us = 50.0;
    EXPECT_LE(end_of(transfers[0]), end_of(waits.front()) + cross_clock_slack_us);
    EXPECT_LE(end_of(transfers[1]), end_of(waits.back()) + cross_clock_slack_us);
}

// Statements launch without an event of their own (kiln::detail::repeated_launch), except in a
// session, which times each of them, eager or fused.
TEST_P(profiler, every_statement_is_a_timed_kernel) {
    const std::size_t n = 1000;
    kiln::queue q(device());
    kiln::vector<float> x(q, std::vector<float>(n, 1.0f)), y(q, n);
    y = 2 * x + 1;  // generated and built before the session
    q.finish();
    kiln::detail::profiling::scoped_session session;
    kiln::queue profiled(device());
    kiln::vector<float> a(profiled, std::vector<float>(n, 1.0f)), b(profiled, n);
    for (int i = 0; i < 3; ++i) b = 2 * a + 1;
    kiln::fused(profiled, [&] {
        b = 2 * a + 1;
        a = 2 * b + 1;
    });
    profiled.finish();
    const auto kernels = spans(json::parse(session.trace_json()), "kernel");
    ASSERT_EQ(kernels.size(), 4u);
    for (std::size_t i = 0; i < kernels.size(); ++i) {
        EXPECT_EQ(kernels[i].at("name"), i < 3 ? "kiln_assign" : "kiln_fused");
        EXPECT_GE(kernels[i].at("args").at("device_ns").get<double>(), 0.0);
    }
    EXPECT_EQ(a.read(), std::vector<float>(n, 7.0f));
}

TEST_P(profiler, events_are_released_once_their_times_are_read) {
    kiln::detail::profiling::scoped_session session;
    kiln::event launched;
    {
        kiln::queue q(device());
        auto scale = kiln::program(device(), scale_source).kernel("scale");
        kiln::buffer<float> x(q, std::vector<float>(256, 1.0f));
        launched = scale(x, 2.0f).launch(q, {256});
        // Compared with the count before, since a backend may hold the event too.
        const long held = launched.impl().use_count();
        EXPECT_GE(held, 2) << "the queue's recorder holds it until it is done";
        q.finish();
        EXPECT_EQ(launched.impl().use_count(), held - 1)
            << "finish() has read its times and let it go";
        scale(x, 3.0f).launch(q, {256});  // dropped at once, never waited for
    }  // the queue goes: its recorder waits for the last launch and reads its times
    EXPECT_EQ(spans(json::parse(session.trace_json()), "kernel").size(), 2u);
}

TEST_P(profiler, builds_say_where_their_binary_came_from) {
    kiln::detail::profiling::scoped_session session;
    const std::string source = "// " + kiln::test::unique_token() + "\n" + scale_source;
    kiln::program compiled(device(), source);
    kiln::program from_memory(device(), source);
    kiln::program_cache::clear_memory();
    kiln::program from_disk(device(), source);  // compiled again when the disk cache is off
    const auto builds = spans(json::parse(session.trace_json()), "build");
    ASSERT_EQ(builds.size(), 3u);
    const char* cache_names[] = {"compiled", "memory", "disk"};
    const kiln::program* programs[] = {&compiled, &from_memory, &from_disk};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(builds[i].at("args").at("cache"),
                  cache_names[static_cast<int>(programs[i]->origin())]);
        EXPECT_EQ(builds[i].at("args").at("source_hash"), builds[0].at("args").at("source_hash"));
        EXPECT_EQ(builds[i].at("args").at("build_ns"), programs[i]->build_time().count());
    }
    EXPECT_EQ(builds[0].at("args").at("cache"), "compiled");
    EXPECT_EQ(builds[1].at("args").at("cache"), "memory");
    EXPECT_EQ(builds[0].at("name"),
              "build " + builds[0].at("args").at("source_hash").get<std::string>());
}

TEST_P(profiler, regions_nest_around_the_work_they_contain) {
    kiln::detail::profiling::scoped_session session;
    kiln::queue q(device());
    kiln::buffer<float> x(q, 4096);
    // [doc:profile-region]
    {
        kiln::profile_region solver("solver");
        for (int step = 0; step < 2; ++step) {
            kiln::profile_region one_step("step");
            x.fill(q, 1.0f);
            q.finish();
        }
    }
    // [/doc]
    const json trace = json::parse(session.trace_json());
    const auto regions = spans(trace, "region");
    ASSERT_EQ(regions.size(), 3u);  // recorded as they end: the steps first
    EXPECT_EQ(regions[0].at("name"), "step");
    EXPECT_EQ(regions[1].at("name"), "step");
    EXPECT_EQ(regions[2].at("name"), "solver");
    const auto finishes = spans(trace, "wait");
    ASSERT_EQ(finishes.size(), 2u);
    for (int step = 0; step < 2; ++step) {
        // Same lane, and each span inside its parent: a viewer draws them nested.
        EXPECT_EQ(regions[step].at("tid"), regions[2].at("tid"));
        EXPECT_GE(regions[step].at("ts").get<double>(), regions[2].at("ts").get<double>());
        EXPECT_LE(end_of(regions[step]), end_of(regions[2]));
        EXPECT_GE(finishes[step].at("ts").get<double>(), regions[step].at("ts").get<double>());
        EXPECT_LE(end_of(finishes[step]), end_of(regions[step]));
    }
}

TEST_P(profiler, summary_counts_every_kernel_and_transfer_kind) {
    kiln::detail::profiling::scoped_session session;
    kiln::queue q(device());
    auto scale = kiln::program(device(), scale_source).kernel("scale");
    kiln::buffer<float> x(q, std::vector<float>(512, 1.0f));
    for (int i = 0; i < 5; ++i) scale(x, 1.0f).launch(q, {512});
    x.read(q);
    x.read(q);
    { kiln::profile_region region("readback"); }
    q.finish();
    const std::string summary = session.summary();
    // Rows: name, count, total ms, mean, min, max (us), and for device rows the share.
    std::istringstream lines(summary);
    std::string line;
    double shares = 0;
    int device_rows = 0;
    bool host_part = false;
    std::map<std::string, int> counts;
    while (std::getline(lines, line)) {
        if (line.starts_with("host time")) host_part = true;
        for (const char* row : {"kernel scale", "read (device to host)", "write (host to device)",
                                "region readback", "build (", "wait queue::finish"}) {
            if (!line.starts_with(row)) continue;
            std::istringstream fields(line.substr(std::string(row).size()));
            std::string skipped;
            if (std::string(row) == "build (") fields >> skipped;  // "compiled)", "disk)"...
            int count = 0;
            double total = 0, mean = 0, min = 0, max = 0;
            fields >> count >> total >> mean >> min >> max;
            EXPECT_TRUE(fields) << line;
            EXPECT_LE(min, mean + 1e-3) << line;
            EXPECT_LE(mean, max + 1e-3) << line;
            counts[row] += count;
            if (!host_part) {
                double share = 0;
                fields >> share;
                shares += share;
                ++device_rows;
            }
        }
    }
    EXPECT_EQ(counts["kernel scale"], 5) << summary;
    EXPECT_EQ(counts["read (device to host)"], 2) << summary;
    EXPECT_EQ(counts["write (host to device)"], 1) << summary;
    EXPECT_EQ(counts["region readback"], 1) << summary;
    EXPECT_EQ(counts["build ("], 1) << summary;
    EXPECT_EQ(counts["wait queue::finish"], 1) << summary;
    EXPECT_EQ(device_rows, 3) << summary;
    EXPECT_NEAR(shares, 100.0, 0.5) << summary;
}

TEST_P(profiler, threads_each_get_their_own_lanes) {
    kiln::detail::profiling::scoped_session session;
    auto scale = kiln::program(device(), scale_source).kernel("scale");
    constexpr int threads = 4, launches = 20;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&] {
            kiln::queue q(device());
            kiln::buffer<float> x(q, 256);
            kiln::profile_region region("worker");
            for (int i = 0; i < launches; ++i) scale(x, 1.0f).launch(q, {256});
            q.finish();
        });
    for (auto& w : workers) w.join();
    const json trace = json::parse(session.trace_json());
    std::set<std::pair<int, int>> queue_lanes, host_lanes;
    for (const json& k : spans(trace, "kernel")) queue_lanes.emplace(k.at("pid"), k.at("tid"));
    for (const json& r : spans(trace, "region")) host_lanes.emplace(r.at("pid"), r.at("tid"));
    EXPECT_EQ(spans(trace, "kernel").size(), std::size_t{threads * launches});
    EXPECT_EQ(queue_lanes.size(), std::size_t{threads});
    EXPECT_EQ(host_lanes.size(), std::size_t{threads});
}

TEST_P(profiler, nothing_is_recorded_when_off) {
    ASSERT_FALSE(kiln::profiling_enabled()) << "run without KILN_PROFILE";
    kiln::queue q(device());
    EXPECT_EQ(q.recorder(), nullptr);
    EXPECT_FALSE(q.options().profiling);
    kiln::profile_region ignored("nothing");
}

#ifdef KILN_VECTOR_ADD
std::string text_of(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::filesystem::perms permissions_of(const std::filesystem::path& file) {
    return std::filesystem::symlink_status(file).permissions();
}

std::set<std::string> entries_of(const std::filesystem::path& folder) {
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder))
        names.insert(entry.path().filename().string());
    return names;
}

/// The trace vector_add wrote: one kernel, `add`, over 1000 items.
void expect_vector_add_trace(const std::string& text) {
    const json trace = json::parse(text);
    const auto kernels = spans(trace, "kernel");
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].at("name"), "add");
    EXPECT_EQ(kernels[0].at("args").at("global"), json::array({1000}));
}

// KILN_PROFILE itself: a real program (examples/vector_add) on this device in a child process.
class profile_environment : public kiln::test::device_test {
  protected:
    /// Runs vector_add with KILN_PROFILE=value in `dir`, its stderr going to dir/stderr.txt;
    /// returns its exit status, stderr in `errors`. `before` is shell run first by the process
    /// that then becomes vector_add (exec), so `$$` there is vector_add's process id.
    int run_vector_add(const std::string& value, std::string& errors,
                       const std::string& before = "") {
        const auto err = dir.path() / "stderr.txt";
        const std::string command = "cd '" + dir.path().string() + "' && umask 022 && " + before +
                                    " export KILN_PROFILE='" + value + "' KILN_DEVICE='" +
                                    child_device_spec() + "' && exec '" + KILN_VECTOR_ADD +
                                    "' 1000 > /dev/null 2> '" + err.string() + "'";
        const int status = std::system(command.c_str());
        errors = text_of(err);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    /// The device under test by backend and name: an index counts the devices this process
    /// sees, and a child process may see another list (on a GPU machine, a child once listed no
    /// NVIDIA OpenCL device and its index 1 was the CUDA view, so the OpenCL case ran on CUDA).
    std::string child_device_spec() const {
        return std::string(kiln::to_string(device().backend())) + "," + device().name();
    }
    kiln::test::temp_dir dir;
};

TEST_P(profile_environment, a_trace_file_is_written_at_exit) {
    const auto file = dir.path() / "trace.json";
    std::string errors;
    ASSERT_EQ(run_vector_add(file.string(), errors), 0) << errors;
    EXPECT_NE(errors.find("kiln: profile written to " + file.string()), std::string::npos)
        << errors;
    std::ifstream in(file);
    const json trace = json::parse(in);
    const auto kernels = spans(trace, "kernel");
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].at("name"), "add");
    EXPECT_EQ(kernels[0].at("args").at("global"), json::array({1000}));
    EXPECT_EQ(spans(trace, "transfer").size(), 3u);  // a and b written, c read
    EXPECT_EQ(spans(trace, "build").size(), 1u);
    // The child ran on the device under test, not merely one of the same name.
    EXPECT_NE(
        name_of(trace, "process_name", kernels[0].at("pid"))
            .find(device().name() + " (" + std::string(kiln::to_string(device().backend())) + ")"),
        std::string::npos);
}

TEST_P(profile_environment, summary_prints_a_table_at_exit) {
    std::string errors;
    ASSERT_EQ(run_vector_add("summary", errors), 0) << errors;
    EXPECT_NE(errors.find("kiln profile: 4 device commands"), std::string::npos) << errors;
    EXPECT_NE(errors.find("\nkernel add "), std::string::npos) << errors;
    EXPECT_NE(errors.find("\nwrite (host to device) "), std::string::npos) << errors;
}

TEST_P(profile_environment, an_unwritable_path_is_a_message_not_a_failure) {
    const auto file = dir.path() / "no-such-directory" / "trace.json";
    std::string errors;
    EXPECT_EQ(run_vector_add(file.string(), errors), 0) << errors;
    EXPECT_NE(errors.find("kiln: KILN_PROFILE: the profile was not written: cannot write '" +
                          file.string() + "'"),
              std::string::npos)
        << errors;
    EXPECT_FALSE(std::filesystem::exists(file));
}

// Standard error named through a link (/dev/stderr is one, to /proc/self/fd/2) is written
// through: the trace lands in the stream between what the program printed before and after, and
// the link stays. (Replacing it turned the link into a regular file holding the trace.)
TEST_P(profile_environment, a_link_to_standard_error_is_written_through) {
    for (const std::string stream : {"/proc/self/fd/2", "/dev/stderr"}) {
        if (!std::filesystem::exists(stream)) continue;
        const auto link = dir.path() / "stderr-link";
        std::filesystem::remove(link);
        std::filesystem::create_symlink(stream, link);
        std::string errors;
        ASSERT_EQ(run_vector_add(link.string(), errors), 0) << errors;
        ASSERT_TRUE(std::filesystem::is_symlink(link)) << stream << ": " << text_of(link);
        EXPECT_EQ(std::filesystem::read_symlink(link), stream);
        const auto start = errors.find("{\"traceEvents\"");
        const auto end = errors.find("kiln: profile written to " + link.string());
        ASSERT_NE(start, std::string::npos) << stream << ": no trace on stderr: " << errors;
        ASSERT_NE(end, std::string::npos) << errors;
        ASSERT_LT(start, end) << errors;
        expect_vector_add_trace(errors.substr(start, end - start));
    }
}

TEST_P(profile_environment, a_fifo_gets_the_trace_as_a_stream) {
    const auto fifo = dir.path() / "trace.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread reader([&] { received = text_of(fifo); });
    std::string errors;
    const int status = run_vector_add(fifo.string(), errors);
    // A writer that never came would leave the reader waiting to open: open the other end once.
    if (const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); unblock >= 0)
        ::close(unblock);
    reader.join();
    ASSERT_EQ(status, 0) << errors;
    expect_vector_add_trace(received);
    EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

// A link to a regular file: the file gets the trace and keeps its permissions; the link stays.
TEST_P(profile_environment, a_link_to_a_file_replaces_the_file_and_stays) {
    const auto target = dir.path() / "real.json", link = dir.path() / "trace.json";
    std::ofstream(target) << "old";
    std::filesystem::permissions(
        target, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::filesystem::create_symlink("real.json", link);
    std::string errors;
    ASSERT_EQ(run_vector_add(link.string(), errors), 0) << errors;
    EXPECT_NE(errors.find("kiln: profile written to " + link.string()), std::string::npos)
        << errors;
    ASSERT_TRUE(std::filesystem::is_symlink(link));
    EXPECT_EQ(std::filesystem::read_symlink(link), "real.json");
    expect_vector_add_trace(text_of(target));
    EXPECT_EQ(permissions_of(target),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

// The temporary file's name cannot be guessed: a link planted at the name kiln once used
// (PATH.tmp.<pid>) is neither written through nor renamed over the trace's path.
TEST_P(profile_environment, a_link_planted_at_a_temporary_name_is_left_alone) {
    const auto victim = dir.path() / "victim.txt", file = dir.path() / "trace.json";
    std::ofstream(victim) << "precious";
    std::string errors;
    ASSERT_EQ(run_vector_add(file.string(), errors, "ln -s victim.txt trace.json.tmp.$$ &&"), 0)
        << errors;
    EXPECT_EQ(text_of(victim), "precious");
    EXPECT_FALSE(std::filesystem::is_symlink(file));
    expect_vector_add_trace(text_of(file));
    // The planted link, untouched, and no temporary file left.
    const auto left = entries_of(dir.path());
    EXPECT_EQ(left.size(), 4u) << testing::PrintToString(left);
    EXPECT_TRUE(left.contains("trace.json") && left.contains("victim.txt"));
}

// A file the user could not write is refused, whoever runs kiln (root too): kept as it was,
// with its permission bits. (It used to be replaced, as the folder allowed, and made writable.)
TEST_P(profile_environment, a_read_only_file_is_refused_and_kept) {
    const auto file = dir.path() / "trace.json";
    std::ofstream(file) << "old";
    std::filesystem::permissions(file, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::group_read |
                                           std::filesystem::perms::others_read);
    struct stat before {};
    ASSERT_EQ(::stat(file.c_str(), &before), 0);
    std::string errors;
    ASSERT_EQ(run_vector_add(file.string(), errors), 0) << errors;
    EXPECT_NE(errors.find("kiln: KILN_PROFILE: the profile was not written: cannot write '" +
                          file.string() + "': Permission denied"),
              std::string::npos)
        << errors;
    struct stat after {};
    ASSERT_EQ(::stat(file.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(after.st_mode & 07777, 0444u);
    EXPECT_EQ(text_of(file), "old");
}

TEST_P(profile_environment, a_replaced_file_keeps_its_permissions) {
    const auto file = dir.path() / "trace.json";
    std::ofstream(file) << "old";
    ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
    std::string errors;
    ASSERT_EQ(run_vector_add(file.string(), errors), 0) << errors;  // under umask 022
    expect_vector_add_trace(text_of(file));
    struct stat status {};
    ASSERT_EQ(::stat(file.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 07777, 0640u);
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(profile_environment);
#endif

TEST(profile_output, an_unwritable_path_leaves_what_was_there) {
    kiln::test::temp_dir dir;
    kiln::detail::profiling::scoped_session session;
    // Beneath a regular file: no directory can be made there, whoever runs the test.
    { std::ofstream(dir.path() / "file") << "old"; }
    const auto beneath_file = dir.path() / "file" / "trace.json";
    // A directory in the way: it is not replaced.
    const auto in_the_way = dir.path() / "directory";
    std::filesystem::create_directories(in_the_way / "inside");
    for (const auto& path : {beneath_file, in_the_way}) {
        testing::internal::CaptureStderr();
        const bool written = session.write_trace(path.string());
        const std::string errors = testing::internal::GetCapturedStderr();
        EXPECT_FALSE(written) << path;
        EXPECT_NE(
            errors.find("kiln: the profile was not written: cannot write '" + path.string() + "'"),
            std::string::npos)
            << errors;
    }
    std::ifstream in(dir.path() / "file");
    std::string content;
    in >> content;
    EXPECT_EQ(content, "old");
    EXPECT_TRUE(std::filesystem::is_directory(in_the_way / "inside"));
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        left.push_back(entry.path().filename().string());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{"directory", "file"})) << "no temporary file left";
}

KILN_INSTANTIATE_FOR_EVERY_DEVICE(profiler);

}  // namespace
