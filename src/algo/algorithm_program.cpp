// SPDX-License-Identifier: Apache-2.0
// The per-device cache of algorithm programs.
#include <atomic>
#include <kiln/detail/algo/algorithm_program.hpp>
#include <kiln/detail/source_builder.hpp>
#include <kiln/error.hpp>
#include <map>
#include <mutex>

namespace kiln::detail {
namespace {

struct program_store {
    std::mutex mutex;
    // Keyed by the device's identity and the algorithm key; node-based, so references stay
    // valid while other entries are added.
    std::map<std::pair<const void*, std::string>, std::unique_ptr<algorithm_program>> programs;
    std::atomic<std::size_t> generated{0};
};

program_store& store() {
    static program_store instance;
    return instance;
}

/// The program under `key`, made by make(source) on a miss.
template <class Make>
const algorithm_program& find_or_build(const device& dev, const std::string& key,
                                       const std::function<std::string()>& generate, Make make) {
    auto& s = store();
    const auto map_key = std::make_pair(dev.identity(), key);
    std::lock_guard lock(s.mutex);
    if (auto found = s.programs.find(map_key); found != s.programs.end()) return *found->second;
    // Built under the lock: a second thread wanting the same program waits for this build
    // rather than compiling it again.
    s.generated.fetch_add(1, std::memory_order_relaxed);
    const std::string source = generate();
    try {
        std::unique_ptr<algorithm_program> built = make(source);
        return *s.programs.emplace(map_key, std::move(built)).first->second;
    } catch (const build_error& e) {
        throw build_error(e.call(), e.code(), e.code_name(),
                          e.log() + "\ngenerated source:\n" + with_line_numbers(source), e.where());
    }
}

}  // namespace

algorithm_program::algorithm_program(kiln::program built,
                                     const std::vector<std::string>& kernel_names)
    : program_(std::move(built)) {
    for (const auto& name : kernel_names) kernels_.emplace_back(name, program_.kernel(name));
}

algorithm_program::algorithm_program(kiln::program built, std::vector<kernel_description> kernels)
    : algorithm_program(std::move(built), kernel_names(kernels)) {
    descriptions_ = std::move(kernels);
}

const kernel_description& algorithm_program::description(std::string_view name) const {
    for (const auto& described : descriptions_)
        if (described.name() == name) return described;
    throw invalid_argument_error(
        "kiln::detail::algorithm_program::description",
        "no kernel described as " + std::string(name) + " in this program");
}

bound_kernel algorithm_program::bind(kernel_binding&& arguments) const {
    const std::string& name = arguments.description().name();
    return kernel(name).bind(std::move(arguments).take());
}

const kiln::kernel& algorithm_program::kernel(std::string_view name) const {
    for (const auto& [known, k] : kernels_)
        if (known == name) return k;
    throw invalid_argument_error("kiln::detail::algorithm_program::kernel",
                                 "no kernel named " + std::string(name) + " in this program");
}

const algorithm_program& algorithm_program_for(const device& dev, const std::string& key,
                                               const std::vector<std::string>& kernel_names,
                                               const std::function<std::string()>& generate) {
    return find_or_build(dev, key, generate, [&](const std::string& source) {
        return std::make_unique<algorithm_program>(kiln::program(dev, source), kernel_names);
    });
}

const algorithm_program& algorithm_program_for(
    const device& dev, const std::string& key,
    const std::function<std::vector<kernel_description>()>& describe,
    const std::function<std::string()>& generate, const std::string& options) {
    return find_or_build(dev, key, generate, [&](const std::string& source) {
        return std::make_unique<algorithm_program>(kiln::program(dev, source, options), describe());
    });
}

std::size_t algorithm_programs_generated() {
    return store().generated.load();
}

void clear_algorithm_programs() {
    auto& s = store();
    std::lock_guard lock(s.mutex);
    s.programs.clear();
}

}  // namespace kiln::detail
