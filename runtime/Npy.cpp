//===- Npy.cpp - NumPy .npy files in and out
//-------------------------------===//
//
// Format (numpy.lib.format): the magic "\x93NUMPY", a major and a minor
// version byte, the header length (2 bytes little-endian in version 1.0,
// 4 bytes in 2.0 and 3.0), then an ASCII (3.0: UTF-8) Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and ended by '\n', then the raw data.
//
// Reading accepts exactly the keys descr, fortran_order and shape (any order,
// any whitespace, single or double quotes, optional trailing comma, Python 2
// "3L" integers) and the dtypes '<f4' and '<f8' ('=' and '|' byte orders too
// when this machine is little-endian, since numpy reads them as native).
// The data must have exactly the size the shape says: a short file is
// "truncated" and bytes after the data are rejected as trailing garbage.
//
//===----------------------------------------------------------------------===//

#include "runtime/Npy.h"
#include "runtime/Precision.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

namespace attn::runtime {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

bool hostIsLittleEndian() {
  const uint16_t probe = 1;
  unsigned char first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

/// "<file>: <message>" on one line (control characters become '?').
Status npyError(const std::string &name, const std::string &message) {
  std::string text = name + ": " + message;
  for (char &c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  return Status::error(text);
}

uint64_t readLE(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

void appendLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>(value & 0xff));
    value >>= 8;
  }
}

/// Recursive-descent parser of the header dict.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &header) : text(header) {}

  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;

  /// Returns an empty string on success, else what is wrong.
  std::string parse() {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return expected("'{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return expected("a quoted key or '}'");
      skipSpace();
      if (!consume(':'))
        return expected("':' after key '" + key + "'");
      skipSpace();
      if (key == "descr") {
        if (seenDescr)
          return "duplicate key 'descr'";
        seenDescr = true;
        if (!parseString(descr))
          return expected("a quoted dtype string for 'descr'");
      } else if (key == "fortran_order") {
        if (seenFortran)
          return "duplicate key 'fortran_order'";
        seenFortran = true;
        if (consumeWord("True"))
          fortranOrder = true;
        else if (consumeWord("False"))
          fortranOrder = false;
        else
          return expected("True or False for 'fortran_order'");
      } else if (key == "shape") {
        if (seenShape)
          return "duplicate key 'shape'";
        seenShape = true;
        if (std::string error = parseShape(); !error.empty())
          return error;
      } else {
        return "unexpected key '" + key +
               "' (expected descr, fortran_order, shape)";
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return expected("',' or '}'");
    }
    skipSpace();
    if (pos != text.size())
      return "unexpected text after the closing '}'";
    if (!seenDescr)
      return "missing key 'descr'";
    if (!seenFortran)
      return "missing key 'fortran_order'";
    if (!seenShape)
      return "missing key 'shape'";
    return "";
  }

private:
  const std::string &text;
  size_t pos = 0;

  std::string expected(const std::string &what) const {
    return "expected " + what + " at header offset " + std::to_string(pos);
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  bool consumeWord(const char *word) {
    size_t len = std::strlen(word);
    if (text.compare(pos, len, word) != 0)
      return false;
    size_t end = pos + len;
    if (end < text.size() &&
        (std::isalnum(static_cast<unsigned char>(text[end])) ||
         text[end] == '_'))
      return false;
    pos = end;
    return true;
  }

  bool parseString(std::string &out) {
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char quote = text[pos];
    size_t end = text.find(quote, pos + 1);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos + 1, end - pos - 1);
    if (out.find('\\') != std::string::npos)
      return false;
    pos = end + 1;
    return true;
  }

  std::string parseShape() {
    if (!consume('('))
      return expected("'(' starting the shape tuple");
    shape.clear();
    skipSpace();
    if (consume(')'))
      return "";
    while (true) {
      skipSpace();
      if (pos >= text.size() ||
          !std::isdigit(static_cast<unsigned char>(text[pos])))
        return expected("a non-negative integer in the shape tuple");
      int64_t value = 0;
      while (pos < text.size() &&
             std::isdigit(static_cast<unsigned char>(text[pos]))) {
        int digit = text[pos] - '0';
        if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
          return "shape dim at header offset " + std::to_string(pos) +
                 " is too large";
        value = value * 10 + digit;
        ++pos;
      }
      consume('L');
      shape.push_back(value);
      skipSpace();
      bool comma = consume(',');
      skipSpace();
      if (consume(')')) {
        if (shape.size() == 1 && !comma)
          return "a one-element shape tuple needs a trailing comma, as in "
                 "(3,)";
        return "";
      }
      if (!comma)
        return expected("',' or ')' in the shape tuple");
    }
  }
};

/// The header to quote in a message: trailing padding dropped, at most 200
/// characters.
std::string printable(const std::string &header) {
  std::string text = header.substr(0, 200);
  size_t end = text.find_last_not_of(" \n\r\t");
  text.resize(end == std::string::npos ? 0 : end + 1);
  return header.size() > 200 ? text + "..." : text;
}

/// IEEE double -> float with round-to-nearest, overflowing to +-inf without
/// relying on an out-of-range conversion (undefined behaviour in C++).
float toFloat(double x) {
  constexpr double maxFloat = std::numeric_limits<float>::max();
  if (std::isfinite(x) && (x > maxFloat || x < -maxFloat)) {
    // Values at or above FLT_MAX + half an ulp round to infinity.
    constexpr double roundsToInf = 0x1.ffffffp127;
    double magnitude = x < 0 ? -x : x;
    float result = magnitude >= roundsToInf
                       ? std::numeric_limits<float>::infinity()
                       : std::numeric_limits<float>::max();
    return x < 0 ? -result : result;
  }
  return static_cast<float>(x);
}

} // namespace

Status parseNpy(const std::string &bytes, const std::string &name,
                Tensor &out) {
  const auto *raw = reinterpret_cast<const unsigned char *>(bytes.data());
  if (bytes.size() < kMagicSize + 2 ||
      bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    return npyError(name, "not an .npy file (bad magic string; expected "
                          "\"\\x93NUMPY\" at the start)");
  int major = raw[kMagicSize], minor = raw[kMagicSize + 1];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    return npyError(
        name, "unsupported .npy format version " + std::to_string(major) + "." +
                  std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t headerStart = kMagicSize + 2 + lengthBytes;
  if (bytes.size() < headerStart)
    return npyError(name, "truncated header: the file ends inside the "
                          "header length field");
  uint64_t headerLength =
      readLE(raw + kMagicSize + 2, static_cast<int>(lengthBytes));
  if (headerLength > bytes.size() - headerStart)
    return npyError(name, "truncated header: header length " +
                              std::to_string(headerLength) + " but only " +
                              std::to_string(bytes.size() - headerStart) +
                              " bytes follow");
  std::string header = bytes.substr(headerStart, headerLength);
  HeaderParser parser(header);
  if (std::string error = parser.parse(); !error.empty())
    return npyError(name, "malformed header: " + error + " in \"" +
                              printable(header) + "\"");

  const std::string &descr = parser.descr;
  size_t itemSize = 0;
  bool isFloat = descr.size() == 3 && descr[1] == 'f' &&
                 (descr[2] == '2' || descr[2] == '4' || descr[2] == '8');
  if (isFloat && descr[0] == '>')
    return npyError(name, "big-endian dtype '" + descr +
                              "' is not supported (only little-endian '<f2' "
                              "float16, '<f4' float32 and '<f8' float64)");
  if (isFloat && (descr[0] == '<' || ((descr[0] == '=' || descr[0] == '|') &&
                                      hostIsLittleEndian())))
    itemSize = static_cast<size_t>(descr[2] - '0');
  if (!itemSize)
    return npyError(name, "unsupported dtype '" + descr +
                              "' (supported: '<f2' float16, '<f4' float32 and "
                              "'<f8' float64; bf16 arguments read float32 "
                              "files, see docs/precision.md)");
  if (parser.fortranOrder)
    return npyError(name, "Fortran-order arrays (fortran_order: True) are "
                          "not supported; save a C-order array");

  int64_t count = checkedNumElements(parser.shape);
  Tensor shapeOnly;
  shapeOnly.shape = parser.shape;
  if (count < 0 || static_cast<uint64_t>(count) >
                       std::numeric_limits<uint64_t>::max() / itemSize)
    return npyError(name, "shape " + shapeOnly.shapeString() +
                              " has too many elements");
  uint64_t expectedBytes = static_cast<uint64_t>(count) * itemSize;
  uint64_t available = bytes.size() - headerStart - headerLength;
  if (available < expectedBytes)
    return npyError(
        name, "truncated data: expected " + std::to_string(expectedBytes) +
                  " bytes for shape " + shapeOnly.shapeString() + " of '" +
                  descr + "', got " + std::to_string(available));
  if (available > expectedBytes)
    return npyError(name, std::to_string(available - expectedBytes) +
                              " bytes of trailing garbage after the " +
                              std::to_string(expectedBytes) +
                              " data bytes for shape " +
                              shapeOnly.shapeString());

  Tensor result;
  result.shape = parser.shape;
  try {
    result.data.resize(static_cast<size_t>(count));
  } catch (...) {
    return npyError(name,
                    "cannot allocate " + std::to_string(count) + " elements");
  }
  const unsigned char *data = raw + headerStart + headerLength;
  for (int64_t i = 0; i < count; ++i) {
    if (itemSize == 2) {
      result.data[i] =
          fromFloat16Bits(static_cast<uint16_t>(readLE(data + 2 * i, 2)));
    } else if (itemSize == 4) {
      uint32_t bits = static_cast<uint32_t>(readLE(data + 4 * i, 4));
      float value;
      std::memcpy(&value, &bits, 4);
      result.data[i] = value;
    } else {
      uint64_t bits = readLE(data + 8 * i, 8);
      double value;
      std::memcpy(&value, &bits, 8);
      result.data[i] = value;
    }
  }
  out = std::move(result);
  return Status::ok();
}

Status readNpy(const std::string &path, Tensor &out) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return npyError(path, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  bool readError = false;
  try {
    while (true) {
      size_t got = std::fread(buffer, 1, sizeof(buffer), file);
      bytes.append(buffer, got);
      if (got < sizeof(buffer)) {
        readError = std::ferror(file) != 0;
        break;
      }
    }
  } catch (...) {
    std::fclose(file);
    return npyError(path, "cannot read: the file is too large for memory");
  }
  int savedErrno = errno;
  std::fclose(file);
  if (readError)
    return npyError(path,
                    std::string("cannot read: ") + std::strerror(savedErrno));
  return parseNpy(bytes, path, out);
}

Status writeNpy(const std::string &path, const Tensor &tensor, NpyDType dtype) {
  int64_t count = checkedNumElements(tensor.shape);
  if (count < 0)
    return npyError(path, "cannot write: shape " + tensor.shapeString() +
                              " has a negative dim or too many elements");
  if (static_cast<uint64_t>(count) != tensor.data.size())
    return npyError(path, "cannot write: tensor of shape " +
                              tensor.shapeString() + " holds " +
                              std::to_string(tensor.data.size()) +
                              " values instead of " + std::to_string(count));
  size_t itemSize = dtype == NpyDType::Float16   ? 2
                    : dtype == NpyDType::Float32 ? 4
                    : dtype == NpyDType::Float64 ? 8
                                                 : 0;
  if (!itemSize)
    return npyError(path, "cannot write: unknown dtype");

  std::string bytes;
  try {
    std::string header = "{'descr': '";
    header += itemSize == 2 ? "<f2" : itemSize == 4 ? "<f4" : "<f8";
    header += "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      if (i)
        header += ", ";
      header += std::to_string(tensor.shape[i]);
    }
    if (tensor.shape.size() == 1)
      header += ",";
    header += "), }";
    // Pad with spaces so that magic + version + length + header (ending in
    // '\n') is a multiple of 64 bytes, as numpy does.
    size_t prefix = kMagicSize + 2 + 2;
    size_t total = prefix + header.size() + 1;
    size_t padded = (total + 63) / 64 * 64;
    header.append(padded - total, ' ');
    header += '\n';
    if (header.size() > 0xffff)
      return npyError(path, "cannot write: the header for shape " +
                                tensor.shapeString() +
                                " is too long for format version 1.0");
    bytes.reserve(prefix + header.size() + itemSize * tensor.data.size());
    bytes.append(kMagic, kMagicSize);
    bytes.push_back('\x01');
    bytes.push_back('\x00');
    appendLE(bytes, header.size(), 2);
    bytes += header;
    for (double value : tensor.data) {
      if (itemSize == 2) {
        appendLE(bytes, float16Bits(roundTo(ElementType::Float16, value)), 2);
      } else if (itemSize == 4) {
        float f = toFloat(value);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        appendLE(bytes, bits, 4);
      } else {
        uint64_t bits;
        std::memcpy(&bits, &value, 8);
        appendLE(bytes, bits, 8);
      }
    }
  } catch (...) {
    return npyError(path, "cannot write: out of memory");
  }

  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return npyError(path, std::string("cannot open for writing: ") +
                              std::strerror(errno));
  size_t written = std::fwrite(bytes.data(), 1, bytes.size(), file);
  int savedErrno = errno;
  bool closeFailed = std::fclose(file) != 0;
  if (written != bytes.size())
    return npyError(path,
                    std::string("cannot write: ") + std::strerror(savedErrno));
  if (closeFailed)
    return npyError(path, std::string("cannot write: ") + std::strerror(errno));
  return Status::ok();
}

} // namespace attn::runtime
