// SPDX-License-Identifier: Apache-2.0
// Signing kiln's compile-cache entries with a secret key of the user's, kept in the cache folder,
// so that only entries written by this user's kiln are ever handed to a driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

namespace kiln::detail {

/// SipHash's 128-bit key, as two little-endian halves of its 16 bytes.
struct signing_key {
    std::uint64_t k0 = 0, k1 = 0;
};

/// SipHash-2-4 (Aumasson and Bernstein, 2012), a keyed hash made to authenticate messages: without
/// the key, making a message with a given hash, or changing a message and its hash so that they
/// agree again, succeeds once in 2^64 tries. The bytes may be added in pieces.
class keyed_hash {
  public:
    explicit keyed_hash(const signing_key& key);
    keyed_hash& add(const void* data, std::size_t size);
    std::uint64_t finish() const;

  private:
    void absorb(std::uint64_t word);
    std::uint64_t v0_, v1_, v2_, v3_;
    std::uint64_t pending_ = 0;  // the bytes of an incomplete word, little-endian
    std::size_t length_ = 0;
};

/// The signing key's file in a cache folder: one per user, signing-key-<effective uid>, so that
/// users sharing a folder do not replace each other's.
std::filesystem::path signing_key_file(const std::filesystem::path& folder);

/// This user's key for the cache folder `folder`, read from signing_key_file. The file is trusted
/// only if it is a regular file (not a link) of 16 bytes, owned by this user and private to them
/// (no group or other permission bits): anything else there is removed, and a new key is made,
/// so that entries signed with a key others could read are misses from then on. A missing folder
/// or key is created, the key from getrandom and through create_private_file, so that processes
/// starting on an empty folder at once agree on one key. nullopt when no key can be read or made
/// (a read-only folder, a foreign file that cannot be removed): then the disk cache is not used.
std::optional<signing_key> signing_key_for(const std::filesystem::path& folder);

}  // namespace kiln::detail
