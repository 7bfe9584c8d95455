// The two-level compile cache: a map in memory behind a mutex, and checksummed files on disk
// written atomically, so that a corrupt entry is rebuilt and concurrent writers are harmless.
#include "runtime/program_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <kiln/detail/handle.hpp>
#include <kiln/runtime/cache.hpp>
#include <list>
#include <map>
#include <mutex>
#include <sstream>

#include "runtime/atomic_file.hpp"

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

// FNV-1a: simple and good enough to name files and detect torn or corrupted payloads; the full
// key is stored in each entry, so a hash collision cannot return the wrong binary.
std::uint64_t fnv1a(const void* data, std::size_t size,
                    std::uint64_t hash = 14695981039346656037ull) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        hash ^= bytes[i];
        hash *= 1099511628211ull;
    }
    return hash;
}

constexpr char entry_magic[8] = {'K', 'I', 'L', 'N', 'B', 'I', 'N', '1'};

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
    std::snprintf(
        name, sizeof name, "%016llx%016llx.kbin",
        static_cast<unsigned long long>(fnv1a(key.data(), key.size())),
        static_cast<unsigned long long>(fnv1a(key.data(), key.size(), 0x9e3779b97f4a7c15ull)));
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

struct file_descriptor_traits {
    using value_type = int;
    static int null() noexcept { return -1; }
    static void release(int fd) noexcept { ::close(fd); }
};
using file_descriptor = detail::handle<file_descriptor_traits>;

/// The bytes of the regular file at `file`. Whatever else may sit at an entry's path is refused
/// without reading a byte: a symbolic link is not followed (O_NOFOLLOW), a FIFO cannot block the
/// open (O_NONBLOCK), and fstat on the opened file rejects directories, FIFOs, devices and files
/// over max_entry_bytes. `rejected` says whether something was there but refused or unreadable.
std::optional<std::string> read_regular_file(const std::filesystem::path& file, bool& rejected) {
    file_descriptor fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        rejected = errno != ENOENT;
        return std::nullopt;
    }
    rejected = true;
    struct stat status {};
    if (::fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode) || status.st_size < 0 ||
        static_cast<std::uint64_t>(status.st_size) > max_entry_bytes)
        return std::nullopt;
    std::string content(static_cast<std::size_t>(status.st_size), '\0');
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t got = ::read(fd.get(), content.data() + done, content.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return std::nullopt;
        done += static_cast<std::size_t>(got);
    }
    rejected = false;
    return content;
}

/// The payload of a valid entry for `key`, or nothing if missing, not a regular file, too large,
/// truncated, corrupt or stale; `rejected` says whether an entry was there but unusable.
std::optional<std::vector<std::byte>> read_entry(const std::filesystem::path& file,
                                                 const std::string& key, bool& rejected) {
    rejected = false;
    const std::optional<std::string> content = read_regular_file(file, rejected);
    if (!content) return std::nullopt;
    std::string_view rest(*content);
    rejected = true;
    if (rest.size() < sizeof entry_magic ||
        std::memcmp(rest.data(), entry_magic, sizeof entry_magic) != 0)
        return std::nullopt;
    rest.remove_prefix(sizeof entry_magic);
    std::uint64_t key_size = 0, payload_size = 0, checksum = 0;
    if (!take_u64(rest, key_size) || rest.size() < key_size || rest.substr(0, key_size) != key)
        return std::nullopt;
    rest.remove_prefix(key_size);
    if (!take_u64(rest, payload_size) || !take_u64(rest, checksum) || rest.size() != payload_size ||
        fnv1a(rest.data(), rest.size()) != checksum)
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
                 std::span<const std::byte> payload) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return false;
    std::string content(entry_magic, sizeof entry_magic);
    append_u64(content, key.size());
    content += key;
    append_u64(content, payload.size());
    append_u64(content, fnv1a(payload.data(), payload.size()));
    content.append(reinterpret_cast<const char*>(payload.data()), payload.size());
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
    bool rejected = false;
    if (!dir.empty()) {
        result.build_time = timed([&] {
            if (auto payload = read_entry(dir / name, key, rejected)) {
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
        if (!dir.empty()) stored = write_entry(dir, name, key, result.impl->binary());
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
