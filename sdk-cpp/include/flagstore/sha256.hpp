#pragma once
// SHA-256 (FIPS 180-4), written here so the SDK needs no crypto library: targeting's buckets are its only use.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace flagstore {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t length);
  void update(std::string_view text) { update(text.data(), text.size()); }
  /** The digest; the object is spent afterwards. */
  std::array<std::uint8_t, 32> finish();

 private:
  void block(const std::uint8_t* data);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;
};

std::array<std::uint8_t, 32> sha256(std::string_view bytes);
std::string toHex(const std::uint8_t* data, std::size_t length);

}  // namespace flagstore
