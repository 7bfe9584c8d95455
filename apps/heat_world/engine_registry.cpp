// SPDX-License-Identifier: Apache-2.0
// The engine registry, and the one place that lists every engine of this build.
#include <stdexcept>

#include "engine.hpp"
#include "engine_kiln.hpp"

namespace kiln::heat {

void engine_registry::add(engine_entry entry) {
    if (entry.name.empty() || !entry.create) {
        throw std::invalid_argument("engine_registry: an engine needs a name and a factory");
    }
    if (find(entry.name) != nullptr) {
        throw std::invalid_argument("engine_registry: engine '" + entry.name +
                                    "' is already registered");
    }
    entries_.push_back(std::move(entry));
}

const engine_entry* engine_registry::find(std::string_view name) const {
    for (const engine_entry& entry : entries_) {
        if (entry.name == name) return &entry;
    }
    return nullptr;
}

std::string engine_registry::default_engine(const engine_options& options) const {
    const engine_entry* best = nullptr;
    int best_rank = 0;
    for (const engine_entry& entry : entries_) {
        if (!entry.default_rank) continue;
        const std::optional<int> rank = entry.default_rank(options);
        if (rank && (best == nullptr || *rank > best_rank)) {
            best = &entry;
            best_rank = *rank;
        }
    }
    if (best == nullptr) throw std::runtime_error("no engine can run with these options");
    return best->name;
}

const engine_entry& engine_registry::at(std::string_view name) const {
    if (const engine_entry* entry = find(name)) return *entry;
    std::string known;
    for (const engine_entry& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
    throw std::invalid_argument("unknown engine '" + std::string(name) + "' (known: " + known +
                                ")");
}

std::unique_ptr<engine> engine_registry::create(std::string_view name,
                                                const engine_options& options) const {
    return at(name).create(options);
}

void register_host_engines(engine_registry& registry) {
    registry.add({.name = "reference",
                  .summary = "sequential, exactly the original program's arithmetic",
                  .uses_device = false,
                  .create = [](const engine_options&) { return make_reference_engine(); },
                  .default_rank = [](const engine_options&) { return reference_default_rank; }});
    registry.add(
        {.name = "threads",
         .summary = "rows split over all cores with std::jthread, no kiln",
         .uses_device = false,
         .create =
             [](const engine_options& options) { return make_threads_engine(options.threads); },
         .default_rank = [](const engine_options&) { return threads_default_rank; }});
}

engine_registry make_engine_registry() {
    engine_registry registry;
    register_host_engines(registry);
    register_kiln_engines(registry);
    return registry;
}

}  // namespace kiln::heat
