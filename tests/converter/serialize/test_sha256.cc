#include <gtest/gtest.h>

#include <string>

#include "converter/src/serialize/sha256.h"

namespace jetplan::converter {
namespace {

std::string hex(const std::string& s) { return sha256_hex(s.data(), s.size()); }

TEST(Sha256, KnownVectors) {
  // FIPS 180-4 / NIST examples.
  EXPECT_EQ(hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes: the length field fits, just does not fit, and a full block.
  EXPECT_EQ(hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7 + 3);
  const std::string expected = hex(data);
  for (size_t split : {0, 1, 63, 64, 65, 500, 999, 1000}) {
    Sha256 h;
    h.update(data.data(), split);
    h.update(data.data() + split, data.size() - split);
    std::string got;
    static const char kHex[] = "0123456789abcdef";
    for (uint8_t b : h.finish()) {
      got += kHex[b >> 4];
      got += kHex[b & 15];
    }
    EXPECT_EQ(got, expected) << "split at " << split;
  }
}

}  // namespace
}  // namespace jetplan::converter
