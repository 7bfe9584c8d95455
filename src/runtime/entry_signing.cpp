// SPDX-License-Identifier: Apache-2.0
// The keyed hash that signs compile-cache entries, and the per-user key it is keyed with.
#include "runtime/entry_signing.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <stdexcept>
#include <string>

#include "runtime/atomic_file.hpp"

namespace kiln::detail {
namespace {

constexpr std::size_t key_bytes = 16;

std::uint64_t little_endian(const unsigned char* bytes) {
    std::uint64_t word = 0;
    for (int i = 0; i < 8; ++i) word |= std::uint64_t(bytes[i]) << (8 * i);
    return word;
}

signing_key key_from(const unsigned char* bytes) {
    return {little_endian(bytes), little_endian(bytes + 8)};
}

void sip_round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3) {
    v0 += v1;
    v1 = std::rotl(v1, 13) ^ v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16) ^ v2;
    v0 += v3;
    v3 = std::rotl(v3, 21) ^ v0;
    v2 += v1;
    v1 = std::rotl(v1, 17) ^ v2;
    v2 = std::rotl(v2, 32);
}

// A key file kiln made for this user and nobody else could have read or replaced.
bool trusted(const own_file& file) {
    return file.bytes.size() == key_bytes && file.owner == geteuid() &&
           (file.permissions & 077) == 0;
}

bool fill_with_random_bytes(std::array<unsigned char, key_bytes>& key) {
    std::size_t done = 0;
    while (done < key.size()) {
        const ssize_t got = getrandom(key.data() + done, key.size() - done, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        done += static_cast<std::size_t>(got);
    }
    return true;
}

}  // namespace

keyed_hash::keyed_hash(const signing_key& key)
    : v0_(key.k0 ^ 0x736f6d6570736575ull),
      v1_(key.k1 ^ 0x646f72616e646f6dull),
      v2_(key.k0 ^ 0x6c7967656e657261ull),
      v3_(key.k1 ^ 0x7465646279746573ull) {}

void keyed_hash::absorb(std::uint64_t word) {
    v3_ ^= word;
    sip_round(v0_, v1_, v2_, v3_);
    sip_round(v0_, v1_, v2_, v3_);
    v0_ ^= word;
}

keyed_hash& keyed_hash::add(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
        pending_ |= std::uint64_t(bytes[i]) << (8 * (length_ % 8));
        if (++length_ % 8 == 0) {
            absorb(pending_);
            pending_ = 0;
        }
    }
    return *this;
}

std::uint64_t keyed_hash::finish() const {
    keyed_hash last = *this;
    last.absorb(last.pending_ | (std::uint64_t(length_ & 0xff) << 56));
    last.v2_ ^= 0xff;
    for (int round = 0; round < 4; ++round) sip_round(last.v0_, last.v1_, last.v2_, last.v3_);
    return last.v0_ ^ last.v1_ ^ last.v2_ ^ last.v3_;
}

std::filesystem::path signing_key_file(const std::filesystem::path& folder) {
    return folder / ("signing-key-" + std::to_string(geteuid()));
}

std::optional<signing_key> signing_key_for(const std::filesystem::path& folder) {
    std::error_code ignored;
    std::filesystem::create_directories(folder, ignored);
    const std::string file = signing_key_file(folder).string();
    // Twice at most: a key another process created between our look and our create is read back.
    for (int attempt = 0; attempt < 2; ++attempt) {
        const own_file_read found = read_own_file(file, key_bytes);
        if (found.file && trusted(*found.file))
            return key_from(reinterpret_cast<const unsigned char*>(found.file->bytes.data()));
        if ((found.file || found.refused) && unlink(file.c_str()) != 0 && errno != ENOENT)
            return std::nullopt;
        std::array<unsigned char, key_bytes> fresh{};
        if (!fill_with_random_bytes(fresh)) return std::nullopt;
        try {
            if (create_private_file(file, fresh.data(), fresh.size()))
                return key_from(fresh.data());
        } catch (const std::runtime_error&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

}  // namespace kiln::detail
