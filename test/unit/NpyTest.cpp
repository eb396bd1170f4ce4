//===- NpyTest.cpp - Unit tests of .npy reading and writing
//----------------===//
//
// Round trips (exact: float64 bit for bit, float32 through float), the
// header layout numpy writes, hand-made headers of every version, and every
// malformed-file class. Files live under ::testing::TempDir().
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"

#include "test/unit/StatusMatchers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

using namespace attn::runtime;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/attn_npy_test_" + name + ".npy";
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(file.good()) << path;
}

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

/// An .npy image with the given version, header text (padded with spaces
/// and '\n' to a multiple of 64 bytes, as numpy does) and raw data.
std::string makeNpy(const std::string &header, const std::string &data,
                    int major = 1, int minor = 0) {
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(static_cast<char>(minor));
  size_t lengthBytes = major == 1 ? 2 : 4;
  std::string text = header;
  size_t total = 8 + lengthBytes + text.size() + 1;
  text.append((64 - total % 64) % 64, ' ');
  text += '\n';
  uint64_t length = text.size();
  for (size_t i = 0; i < lengthBytes; ++i)
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return out + text + data;
}

std::string f32Bytes(std::vector<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string f64Bytes(std::vector<double> values) {
  std::string out(values.size() * 8, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

const std::string kF4 = "{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, 3), }";

TEST(NpyTest, RoundTripFloat64IsExact) {
  std::string path = tempPath("f64");
  Tensor t({2, 3, 4});
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = std::sin(double(i)) * 1e-3 + 1.0 / 3;
  t.data[5] = std::numeric_limits<double>::infinity();
  t.data[6] = -0.0;
  t.data[7] = std::numeric_limits<double>::denorm_min();
  ASSERT_OK(writeNpy(path, t, NpyDType::Float64));
  Tensor back;
  ASSERT_OK(readNpy(path, back));
  EXPECT_EQ(back.shape, t.shape);
  ASSERT_EQ(back.data.size(), t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i)
    EXPECT_EQ(std::memcmp(&back.data[i], &t.data[i], 8), 0) << i;
}

TEST(NpyTest, RoundTripFloat32RoundsToFloat) {
  std::string path = tempPath("f32");
  Tensor t({5}, {0.1, -2.5, 1e30, 1e300, -1e300});
  ASSERT_OK(writeNpy(path, t));
  Tensor back;
  ASSERT_OK(readNpy(path, back));
  EXPECT_EQ(back.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(back.data[0], double(0.1f));
  EXPECT_EQ(back.data[1], -2.5);
  EXPECT_EQ(back.data[2], double(1e30f));
  EXPECT_EQ(back.data[3], std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.data[4], -std::numeric_limits<double>::infinity());
  // Just above FLT_MAX but below the rounding midpoint stays FLT_MAX.
  Tensor edge({2}, {double(std::numeric_limits<float>::max()) * (1 + 1e-9),
                    std::nextafter(0x1.ffffffp127, 0.0)});
  ASSERT_OK(writeNpy(path, edge));
  ASSERT_OK(readNpy(path, back));
  EXPECT_EQ(back.data[0], double(std::numeric_limits<float>::max()));
  EXPECT_EQ(back.data[1], double(std::numeric_limits<float>::max()));
}

// float16 files: every value is exact, including subnormals, the largest
// finite value, infinities and NaN; values that are not f16 are rounded to
// nearest even on writing.
TEST(NpyTest, RoundTripFloat16) {
  std::string path = tempPath("f16");
  Tensor t({9}, {0.1, -2.5, 65504.0, 0x1p-24, -0x1p-14, 1e6, -0.0,
                 std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::quiet_NaN()});
  ASSERT_OK(writeNpy(path, t, NpyDType::Float16));
  std::string bytes = readBytes(path);
  EXPECT_NE(bytes.find("'descr': '<f2'"), std::string::npos);
  EXPECT_EQ(bytes.size() % 64, 18u); // 64-byte header, 9 two-byte values
  Tensor back;
  ASSERT_OK(readNpy(path, back));
  ASSERT_EQ(back.data.size(), 9u);
  EXPECT_EQ(back.data[0], 0x1.998p-4); // 0.1 to nearest f16
  EXPECT_EQ(back.data[1], -2.5);
  EXPECT_EQ(back.data[2], 65504.0);
  EXPECT_EQ(back.data[3], 0x1p-24); // smallest subnormal
  EXPECT_EQ(back.data[4], -0x1p-14); // smallest normal
  EXPECT_EQ(back.data[5], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(back.data[6] == 0.0 && std::signbit(back.data[6]));
  EXPECT_EQ(back.data[7], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(back.data[8]));
  // A hand-made '<f2' file: 1.0 (0x3c00) and -2.0 (0xc000).
  ASSERT_OK(parseNpy(makeNpy("{'descr': '<f2', 'fortran_order': False, "
                             "'shape': (2,), }",
                             std::string("\x00\x3c\x00\xc0", 4)),
                     "h.npy", back));
  EXPECT_EQ(back.data, (std::vector<double>{1.0, -2.0}));
}

TEST(NpyTest, ScalarAndEmpty) {
  std::string path = tempPath("scalar");
  Tensor scalar(std::vector<int64_t>{}, {3.5});
  ASSERT_OK(writeNpy(path, scalar, NpyDType::Float64));
  std::string bytes = readBytes(path);
  EXPECT_NE(bytes.find("'shape': (), }"), std::string::npos);
  Tensor back;
  ASSERT_OK(readNpy(path, back));
  EXPECT_TRUE(back.shape.empty());
  EXPECT_EQ(back.data, std::vector<double>{3.5});

  Tensor empty({0, 3});
  ASSERT_OK(writeNpy(path, empty));
  ASSERT_OK(readNpy(path, back));
  EXPECT_EQ(back.shape, (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(back.data.empty());
}

TEST(NpyTest, WritesNumpyLayout) {
  std::string path = tempPath("layout");
  ASSERT_OK(writeNpy(path, Tensor({2, 3}), NpyDType::Float32));
  std::string bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLength = static_cast<unsigned char>(bytes[8]) |
                        (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  std::string header = bytes.substr(10, headerLength);
  EXPECT_EQ(header.substr(0, kF4.size()), kF4);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.find_first_not_of(' ', kF4.size()), headerLength - 1);
  EXPECT_EQ(bytes.size(), 10 + headerLength + 6 * 4);
  // A 1-D shape is written as a one-element tuple.
  ASSERT_OK(writeNpy(path, Tensor({7}), NpyDType::Float64));
  EXPECT_NE(readBytes(path).find("'descr': '<f8', 'fortran_order': False, "
                                 "'shape': (7,), }"),
            std::string::npos);
}

TEST(NpyTest, ParsesHeaderVariants) {
  std::string data = f32Bytes({1, 2, 3, 4, 5, 6});
  Tensor out;
  // numpy's own layout.
  ASSERT_OK(parseNpy(makeNpy(kF4, data), "a.npy", out));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.data, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // Other key order, odd whitespace, double quotes, no trailing comma,
  // Python 2 long integers.
  ASSERT_OK(parseNpy(makeNpy("{ \"shape\" :(2 ,3L) ,'fortran_order':False,"
                             "'descr':'<f4'}",
                             data),
                     "b.npy", out));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3}));
  // Versions 2.0 and 3.0 use a 4-byte header length.
  ASSERT_OK(parseNpy(makeNpy(kF4, data, 2, 0), "v2.npy", out));
  EXPECT_EQ(out.data[5], 6);
  ASSERT_OK(parseNpy(makeNpy(kF4, data, 3, 0), "v3.npy", out));
  EXPECT_EQ(out.data[5], 6);
  // float64, 1-D, scalar.
  ASSERT_OK(parseNpy(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (2,), }",
                             f64Bytes({0.1, -7})),
                     "c.npy", out));
  EXPECT_EQ(out.data, (std::vector<double>{0.1, -7}));
  ASSERT_OK(parseNpy(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (), }",
                             f64Bytes({42})),
                     "d.npy", out));
  EXPECT_TRUE(out.shape.empty());
  EXPECT_EQ(out.data, std::vector<double>{42});
  // '=' and '|' mean native order, little-endian on every host we support.
  const uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  if (first == 1) {
    ASSERT_OK(parseNpy(makeNpy("{'descr': '=f8', 'fortran_order': False, "
                               "'shape': (1,), }",
                               f64Bytes({2})),
                       "e.npy", out));
    ASSERT_OK(parseNpy(makeNpy("{'descr': '|f4', 'fortran_order': False, "
                               "'shape': (1,), }",
                               f32Bytes({2})),
                       "f.npy", out));
    EXPECT_EQ(out.data, std::vector<double>{2});
  }
}

TEST(NpyTest, CannotOpen) {
  Tensor out;
  std::string path = ::testing::TempDir() + "/attn_npy_no_such_dir/x.npy";
  EXPECT_ERROR(readNpy(path, out), path.c_str(), "cannot open");
  EXPECT_ERROR(writeNpy(path, Tensor({1})), path.c_str(),
               "cannot open for writing");
  EXPECT_ERROR(readNpy(::testing::TempDir(), out), "cannot");
}

TEST(NpyTest, BadMagic) {
  Tensor out;
  std::string path = tempPath("badmagic");
  writeBytes(path, "PK\x03\x04 this is a zip file, not an npy file");
  EXPECT_ERROR(readNpy(path, out), path.c_str(), "not an .npy file", "magic");
  writeBytes(path, "");
  EXPECT_ERROR(readNpy(path, out), path.c_str(), "not an .npy file");
  writeBytes(path, "\x93NUMP");
  EXPECT_ERROR(readNpy(path, out), "not an .npy file");
}

TEST(NpyTest, UnsupportedVersion) {
  Tensor out;
  std::string data = f32Bytes({1, 2, 3, 4, 5, 6});
  EXPECT_ERROR(parseNpy(makeNpy(kF4, data, 4, 0), "v4.npy", out), "v4.npy",
               "unsupported", "version 4.0", "1.0, 2.0, 3.0");
  EXPECT_ERROR(parseNpy(makeNpy(kF4, data, 1, 1), "v11.npy", out),
               "version 1.1");
}

TEST(NpyTest, MalformedHeader) {
  Tensor out;
  std::string data = f32Bytes({1, 2, 3, 4, 5, 6});
  struct Case {
    const char *header;
    const char *detail;
  };
  const Case cases[] = {
      {"'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "'{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
       "expected a quoted key or '}'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
       "',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (2, 3)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (2, 3)}", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (2, 3)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3)}",
       "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "'('"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}",
       "non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
       "trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
       "',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999,)}",
       "too large"},
      {"{'descr': <f4, 'fortran_order': False, 'shape': (2, 3)}",
       "quoted dtype"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x",
       "after the closing"},
  };
  for (const Case &c : cases) {
    Status status = parseNpy(makeNpy(c.header, data), "bad.npy", out);
    EXPECT_ERROR(status, "bad.npy", "malformed header", c.detail);
    // One line, even though the header ends in '\n'.
    EXPECT_EQ(status.message().find('\n'), std::string::npos);
  }
  // A shape whose element count overflows.
  EXPECT_ERROR(parseNpy(makeNpy("{'descr': '<f8', 'fortran_order': False, "
                                "'shape': (4294967296, 4294967296), }",
                                ""),
                        "huge.npy", out),
               "huge.npy", "too many elements");
}

TEST(NpyTest, TruncatedHeader) {
  Tensor out;
  std::string full = makeNpy(kF4, f32Bytes({1, 2, 3, 4, 5, 6}));
  EXPECT_ERROR(parseNpy(full.substr(0, 9), "t.npy", out), "t.npy",
               "truncated header");
  EXPECT_ERROR(parseNpy(full.substr(0, 40), "t.npy", out), "t.npy",
               "truncated header", "header length 118", "only 30 bytes");
}

TEST(NpyTest, UnsupportedDTypes) {
  Tensor out;
  auto header = [](const std::string &descr) {
    return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,)}";
  };
  std::string data(16, '\0');
  for (const char *descr : {"<i8", "<c16", "|u1", "<U3", "f8"})
    EXPECT_ERROR(parseNpy(makeNpy(header(descr), data), "d.npy", out), "d.npy",
                 "unsupported dtype", descr, "'<f2'", "'<f4'", "'<f8'");
  // What np.save writes for an ml_dtypes bfloat16 array: the message says
  // how bf16 arguments are read instead.
  EXPECT_ERROR(parseNpy(makeNpy(header("<V2"), data), "bf.npy", out),
               "unsupported dtype", "'<V2'", "bf16 arguments read float32",
               "docs/precision.md");
  EXPECT_ERROR(parseNpy(makeNpy(header(">f4"), data), "be.npy", out), "be.npy",
               "big-endian", "'>f4'", "'<f4'");
  EXPECT_ERROR(parseNpy(makeNpy(header(">f8"), data), "be.npy", out),
               "big-endian", "'>f8'");
}

TEST(NpyTest, FortranOrder) {
  Tensor out;
  EXPECT_ERROR(parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': True, "
                                "'shape': (2, 3), }",
                                f32Bytes({1, 2, 3, 4, 5, 6})),
                        "f.npy", out),
               "f.npy", "Fortran");
}

TEST(NpyTest, TruncatedDataAndTrailingGarbage) {
  Tensor out = Tensor({1}, {42});
  std::string path = tempPath("truncated");
  writeBytes(path, makeNpy(kF4, f32Bytes({1, 2, 3, 4, 5})));
  EXPECT_ERROR(readNpy(path, out), path.c_str(), "truncated data",
               "expected 24 bytes", "got 20");
  writeBytes(path, makeNpy(kF4, f32Bytes({1, 2, 3, 4, 5, 6, 7})));
  EXPECT_ERROR(readNpy(path, out), path.c_str(), "4 bytes of trailing");
  // `out` is untouched on error.
  EXPECT_EQ(out.data, std::vector<double>{42});
}

TEST(NpyTest, WriteRejectsInconsistentTensors) {
  std::string path = tempPath("inconsistent");
  EXPECT_ERROR(writeNpy(path, Tensor({2, 2}, {1, 2, 3})), path.c_str(), "2x2",
               "3 values", "instead of 4");
  EXPECT_ERROR(writeNpy(path, Tensor({-1}, {})), path.c_str(), "negative");
}

} // namespace
