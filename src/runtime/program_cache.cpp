// SPDX-License-Identifier: Apache-2.0
// The two-level compile cache: a map in memory behind a mutex, and files on disk written
// atomically and signed with the user's key, so that a corrupt or forged entry is rebuilt, never
// handed to a driver, and concurrent writers are harmless.
#include "runtime/program_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/runtime/cache.hpp>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "backend/fnv1a.hpp"
#include "runtime/atomic_file.hpp"
#include "runtime/entry_signing.hpp"

namespace kiln {
namespace {

std::mutex cache_mutex;
program_cache::statistics cache_stats;

// Memory entries are per device object: a binary is loaded into one device's context. The map
// is bounded: the least recently used entry goes first (programs in use stay alive through
// their owners' shared pointers; only the cache forgets them).
using memory_key = std::pair<const detail::device_impl*, std::string>;
struct memory_entry {
    std::shared_ptr<detail::program_impl> impl;
    std::list<memory_key>::iterator recency;
};
struct memory_cache {
    std::map<memory_key, memory_entry> entries;
    std::list<memory_key> recency;  // most recently used first
    std::size_t capacity = program_cache::default_memory_capacity;
};
memory_cache& memory() {
    static memory_cache cache;
    return cache;
}

void evict_beyond_capacity(memory_cache& cache) {
    while (cache.entries.size() > cache.capacity) {
        cache.entries.erase(cache.recency.back());
        cache.recency.pop_back();
    }
}

// An entry: this magic, the key's size and the key, the payload's size, the keyed hash of all
// of that and the payload (entry_signing.hpp), then the payload (the device binary). Version 1
// carried an FNV-1a checksum instead, which anyone could recompute over a payload of their own.
constexpr char entry_magic[8] = {'K', 'I', 'L', 'N', 'B', 'I', 'N', '2'};

std::string cache_key(const device& dev, std::span<const std::string> sources,
                      const std::string& options) {
    std::string key = "kiln program cache key v1\n";
    key += std::string(to_string(dev.backend())) + "\n" + dev.name() + "\n" +
           dev.impl().compiler_identity() + "\noptions: " + options + "\n";
    for (const auto& source : sources) key += std::to_string(source.size()) + ":" + source + "\n";
    return key;
}

std::string entry_file_name(const std::string& key) {
    char name[64];
    std::snprintf(name, sizeof name, "%016llx%016llx.kbin",
                  static_cast<unsigned long long>(detail::fnv1a(key.data(), key.size())),
                  static_cast<unsigned long long>(
                      detail::fnv1a(key.data(), key.size(), 0x9e3779b97f4a7c15ull)));
    return name;
}

void append_u64(std::string& out, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool take_u64(std::string_view& in, std::uint64_t& value) {
    if (in.size() < 8) return false;
    value = 0;
    for (int i = 0; i < 8; ++i)
        value |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(8);
    return true;
}

// The largest entry read back or written: 64 MiB, 500 times the largest entry the test suites
// write on PoCL (126 KB, runtime.launch) and far above what a kernel's device binary needs. A
// bigger file at an entry's path is not kiln's, and is not read into memory.
constexpr std::uint64_t max_entry_bytes = std::uint64_t(64) << 20;

/// The keyed hash an entry carries: of everything before it, and of the payload after it.
std::uint64_t entry_signature(const detail::signing_key& signing, std::string_view header,
                              std::string_view payload) {
    return detail::keyed_hash(signing)
        .add(header.data(), header.size())
        .add(payload.data(), payload.size())
        .finish();
}

/// The payload of a valid entry for `key`, or nothing if missing, not a regular file, too large,
/// truncated, corrupt, stale or not signed with `signing`; `rejected` says whether an entry was
/// there but unusable. Only a payload that kiln wrote for this user reaches a driver: drivers
/// crash on malformed binaries (PoCL's pocl_binary_deserialize asserts) instead of refusing them.
std::optional<std::vector<std::byte>> read_entry(const std::filesystem::path& file,
                                                 const std::string& key,
                                                 const detail::signing_key& signing,
                                                 bool& rejected) {
    const detail::own_file_read found = detail::read_own_file(file.string(), max_entry_bytes);
    rejected = found.refused;
    if (!found.file) return std::nullopt;
    const std::string_view content(found.file->bytes);
    std::string_view rest = content;
    rejected = true;
    if (rest.size() < sizeof entry_magic ||
        std::memcmp(rest.data(), entry_magic, sizeof entry_magic) != 0)
        return std::nullopt;
    rest.remove_prefix(sizeof entry_magic);
    std::uint64_t key_size = 0, payload_size = 0, signature = 0;
    if (!take_u64(rest, key_size) || rest.size() < key_size || rest.substr(0, key_size) != key)
        return std::nullopt;
    rest.remove_prefix(key_size);
    if (!take_u64(rest, payload_size)) return std::nullopt;
    const std::string_view header = content.substr(0, content.size() - rest.size());
    if (!take_u64(rest, signature) || rest.size() != payload_size ||
        entry_signature(signing, header, rest) != signature)
        return std::nullopt;
    rejected = false;
    std::vector<std::byte> payload(rest.size());
    std::memcpy(payload.data(), rest.data(), rest.size());
    return payload;
}

/// Written through a temporary file renamed over the entry (detail::replace_own_file), so readers
/// only ever see a complete entry, two writers of the same entry simply replace each other, and
/// nothing planted in the folder is written through.
bool write_entry(const std::filesystem::path& dir, const std::string& name, const std::string& key,
                 const detail::signing_key& signing, std::span<const std::byte> payload) {
    std::string content(entry_magic, sizeof entry_magic);
    append_u64(content, key.size());
    content += key;
    append_u64(content, payload.size());
    const std::string_view payload_bytes(reinterpret_cast<const char*>(payload.data()),
                                         payload.size());
    append_u64(content, entry_signature(signing, content, payload_bytes));
    content += payload_bytes;
    if (content.size() > max_entry_bytes) return false;  // it would never be read back
    try {
        detail::replace_own_file((dir / name).string(), content.data(), content.size());
    } catch (const std::runtime_error&) {
        return false;
    }
    return true;
}

bool show_kernels() {
    const char* value = std::getenv("KILN_SHOW_KERNELS");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
}

void print_sources(const device& dev, std::span<const std::string> sources,
                   const std::string& options) {
    std::ostringstream out;
    out << "=== kiln: program for " << dev.name() << " (" << to_string(dev.backend()) << ")"
        << (options.empty() ? "" : ", options: " + options) << "\n";
    for (const auto& source : sources) out << source << (source.ends_with('\n') ? "" : "\n");
    out << "=== end of program\n";
    std::cerr << out.str() << std::flush;
}

template <class F>
std::chrono::nanoseconds timed(F&& work) {
    auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start);
}

}  // namespace

namespace program_cache {

std::filesystem::path directory() {
    if (const char* dir = std::getenv("KILN_CACHE_DIR")) return dir;  // empty: disk cache off
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
        return std::filesystem::path(xdg) / "kiln";
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
        return std::filesystem::path(home) / ".cache" / "kiln";
    return {};
}

void clear_memory() {
    std::lock_guard lock(cache_mutex);
    memory().entries.clear();
    memory().recency.clear();
}

void set_memory_capacity(std::size_t entries) {
    std::lock_guard lock(cache_mutex);
    memory().capacity = entries;
    evict_beyond_capacity(memory());
}

std::size_t memory_size() {
    std::lock_guard lock(cache_mutex);
    return memory().entries.size();
}

statistics stats() {
    std::lock_guard lock(cache_mutex);
    return cache_stats;
}

}  // namespace program_cache

namespace detail {

cached_program get_or_build(const device& dev, std::span<const std::string> sources,
                            const std::string& options) {
    const std::string key = cache_key(dev, sources, options);
    const memory_key entry_key(&dev.impl(), key);
    {
        std::lock_guard lock(cache_mutex);
        auto& cache = memory();
        if (auto found = cache.entries.find(entry_key); found != cache.entries.end()) {
            ++cache_stats.memory_hits;
            cache.recency.splice(cache.recency.begin(), cache.recency, found->second.recency);
            return {found->second.impl, program_origin::memory_cache, std::chrono::nanoseconds(0)};
        }
    }
    if (show_kernels()) print_sources(dev, sources, options);

    // Compiling happens outside the lock: builds of different programs may overlap, and two
    // threads racing on the same program both build it, one result winning in the map.
    cached_program result;
    const auto dir = program_cache::directory();
    const std::string name = entry_file_name(key);
    // Without the user's key no entry can be trusted, nor signed for later: the disk cache is off.
    const std::optional<detail::signing_key> signing =
        dir.empty() ? std::nullopt : detail::signing_key_for(dir);
    bool rejected = false;
    if (signing) {
        result.build_time = timed([&] {
            if (auto payload = read_entry(dir / name, key, *signing, rejected)) {
                result.impl = dev.impl().load(*payload, options);
                if (!result.impl) rejected = true;
            }
        });
    }
    bool stored = true;
    if (result.impl) {
        result.origin = program_origin::disk_cache;
    } else {
        result.build_time = timed([&] { result.impl = dev.impl().build(sources, options); });
        result.origin = program_origin::compiled;
        if (!dir.empty())
            stored = signing && write_entry(dir, name, key, *signing, result.impl->binary());
    }

    std::lock_guard lock(cache_mutex);
    if (result.origin == program_origin::disk_cache)
        ++cache_stats.disk_hits;
    else
        ++cache_stats.compiles;
    if (rejected) ++cache_stats.disk_rejected;
    if (!stored) ++cache_stats.disk_write_failures;
    auto& cache = memory();
    auto [it, inserted] = cache.entries.emplace(entry_key, memory_entry{result.impl, {}});
    if (inserted) {
        cache.recency.push_front(entry_key);
        it->second.recency = cache.recency.begin();
    }
    result.impl = it->second.impl;
    evict_beyond_capacity(cache);
    return result;
}

}  // namespace detail
}  // namespace kiln
