//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// The header is the repr of a Python dict; this reads the subset NumPy
// writes (strings, True/False, tuples of integers, optional trailing commas,
// and the 'L' suffix of Python 2 longs) and requires exactly the three keys.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/Npy.h"

#include "tfc/Formats/Files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace tfc::rt;

uint64_t NpyArray::numElements() const {
  uint64_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

static const char kMagic[] = "\x93NUMPY";

namespace {

/// The header dict, parsed.
struct Header {
  bool hasDescr = false, hasOrder = false, hasShape = false;
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(Header &out, std::string &error) {
    if (!dict(out)) {
      error = "malformed header at offset " + std::to_string(pos) + ": " + why +
              " (header: " + printable() + ")";
      return false;
    }
    return true;
  }

private:
  bool fail(std::string message) {
    why = std::move(message);
    return false;
  }
  void space() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool eat(char c) {
    space();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  std::string printable() const {
    std::string s;
    for (char c : text.substr(0, 200))
      s += (c >= 0x20 && c < 0x7F) ? c : '.';
    return s + (text.size() > 200 ? "..." : "");
  }

  bool string(std::string &out) {
    space();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return fail("expected a string");
    char quote = text[pos++];
    while (pos < text.size() && text[pos] != quote) {
      if (text[pos] == '\\')
        return fail("escapes are not supported in header strings");
      out.push_back(text[pos++]);
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }

  bool integer(int64_t &out) {
    space();
    size_t start = pos;
    uint64_t v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      v = v * 10 + static_cast<uint64_t>(text[pos++] - '0');
      if (v > (UINT64_C(1) << 62))
        return fail("a dimension is too large");
    }
    if (pos == start)
      return fail("expected a non-negative integer");
    if (pos < text.size() && text[pos] == 'L') // a Python 2 long
      ++pos;
    out = static_cast<int64_t>(v);
    return true;
  }

  bool tuple(std::vector<int64_t> &out) {
    if (!eat('('))
      return fail("expected a tuple");
    if (eat(')'))
      return true;
    bool comma = false;
    while (true) {
      int64_t v;
      if (!integer(v))
        return false;
      out.push_back(v);
      comma = eat(',');
      if (eat(')'))
        break;
      if (!comma)
        return fail("expected ',' or ')' in the shape");
    }
    if (out.size() == 1 && !comma)
      return fail("a one-dimensional shape needs a trailing comma, as in "
                  "(3,)");
    return true;
  }

  bool dict(Header &out) {
    if (!eat('{'))
      return fail("expected '{'");
    while (!eat('}')) {
      std::string key;
      if (!string(key))
        return false;
      if (!eat(':'))
        return fail("expected ':'");
      if (key == "descr") {
        space();
        if (pos < text.size() && text[pos] == '[')
          return fail("structured dtypes are not supported");
        if (out.hasDescr || !string(out.descr))
          return out.hasDescr ? fail("'descr' appears twice") : false;
        out.hasDescr = true;
      } else if (key == "fortran_order") {
        if (out.hasOrder)
          return fail("'fortran_order' appears twice");
        space();
        if (text.substr(pos, 4) == "True") {
          out.fortranOrder = true;
          pos += 4;
        } else if (text.substr(pos, 5) == "False") {
          pos += 5;
        } else {
          return fail("'fortran_order' must be True or False");
        }
        out.hasOrder = true;
      } else if (key == "shape") {
        if (out.hasShape)
          return fail("'shape' appears twice");
        if (!tuple(out.shape))
          return false;
        out.hasShape = true;
      } else {
        return fail("unexpected key '" + key + "'");
      }
      if (!eat(',')) {
        if (!eat('}'))
          return fail("expected ',' or '}'");
        break;
      }
    }
    space();
    if (pos != text.size())
      return fail("unexpected text after the dict");
    return true;
  }

  std::string_view text;
  size_t pos = 0;
  std::string why;
};

bool typeOfDescr(const std::string &descr, DType &out) {
  if (descr.size() != 3)
    return false;
  char order = descr[0];
  for (const DTypeTraits &t : kDTypeTable) {
    if (!t.npyDescr || descr.compare(1, 2, t.npyDescr + 1) != 0)
      continue;
    bool oneByte = t.blockBytes == 1;
    if (order == '<' || order == '=' || (oneByte && order == '|')) {
      out = t.type;
      return true;
    }
  }
  return false;
}

} // namespace

bool tfc::rt::parseNpy(std::string_view bytes, NpyArray &out,
                       std::string &error, const std::string &what) {
  auto fail = [&](const std::string &message) {
    error = what + ": " + message;
    return false;
  };
  out = NpyArray();
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view(kMagic, 6))
    return fail("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  unsigned minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t prefix = 8 + lengthBytes;
  if (bytes.size() < prefix)
    return fail("truncated: the file ends inside the header length");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[8 + i]))
                    << (8 * i);
  if (headerLength > bytes.size() - prefix)
    return fail("truncated: the header needs " + std::to_string(headerLength) +
                " bytes but only " + std::to_string(bytes.size() - prefix) +
                " follow");
  Header header;
  std::string why;
  if (!HeaderParser(bytes.substr(prefix, headerLength)).parse(header, why))
    return fail(why);
  if (!header.hasDescr || !header.hasOrder || !header.hasShape)
    return fail(std::string("the header has no '") +
                (!header.hasDescr   ? "descr"
                 : !header.hasOrder ? "fortran_order"
                                    : "shape") +
                "'");
  if (!typeOfDescr(header.descr, out.type)) {
    if (!header.descr.empty() && header.descr[0] == '>')
      return fail("big-endian data ('" + header.descr +
                  "') is not supported; convert it with "
                  "arr.astype(arr.dtype.newbyteorder('<'))");
    return fail("unsupported dtype '" + header.descr +
                "' (supported: <f4, <f8, <f2, <i8, <i4, |b1, |u1)");
  }
  if (header.fortranOrder)
    return fail("Fortran-order arrays are not supported; save a C-order "
                "array (numpy.ascontiguousarray)");
  uint64_t elements = 1;
  for (int64_t d : header.shape) {
    if (d != 0 && elements > (UINT64_C(1) << 62) / static_cast<uint64_t>(d))
      return fail("the shape is too large");
    elements *= static_cast<uint64_t>(d);
  }
  uint64_t size = dtypeSize(out.type);
  if (elements > (UINT64_C(1) << 62) / size)
    return fail("the shape is too large");
  uint64_t need = elements * size;
  uint64_t have = bytes.size() - prefix - headerLength;
  std::string shapeText = "(";
  for (size_t i = 0; i < header.shape.size(); ++i)
    shapeText += (i ? ", " : "") + std::to_string(header.shape[i]);
  shapeText += header.shape.size() == 1 ? ",)" : ")";
  if (have < need)
    return fail("truncated: shape " + shapeText + " of '" + header.descr +
                "' needs " + std::to_string(need) +
                " bytes of data but the file has " + std::to_string(have));
  if (have > need)
    return fail(std::to_string(have - need) +
                " unexpected bytes after the data of shape " + shapeText);
  out.shape = std::move(header.shape);
  const uint8_t *data =
      reinterpret_cast<const uint8_t *>(bytes.data()) + prefix + headerLength;
  out.data.assign(data, data + need);
  return true;
}

bool tfc::rt::readNpy(const std::string &path, NpyArray &out,
                      std::string &error) {
  // Not an ifstream: a FIFO must be refused, not waited on.
  std::string bytes;
  if (!readRegularFile(path, bytes, UINT64_C(1) << 40, error))
    return false;
  return parseNpy(bytes, out, error, path);
}

std::string tfc::rt::encodeNpy(DType type, const std::vector<int64_t> &shape,
                               const void *data) {
  const char *descr = traitsOf(type).npyDescr;
  if (!descr)
    return {};
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  uint64_t elements = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += (i ? ", " : "") + std::to_string(shape[i]);
    elements *= static_cast<uint64_t>(shape[i]);
  }
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Version 1.0 has a 2-byte header length; larger headers need 2.0.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  if (total - prefix > 65535) {
    prefix = 12;
    total = prefix + dict.size() + 1;
  }
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic, 6);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  uint64_t length = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xFF);
  out += dict;
  if (elements > 0)
    out.append(static_cast<const char *>(data), elements * dtypeSize(type));
  return out;
}

bool tfc::rt::writeNpy(const std::string &path, DType type,
                       const std::vector<int64_t> &shape, const void *data,
                       std::string &error) {
  if (!traitsOf(type).npyDescr) {
    error = path + ": NumPy has no " + traitsOf(type).name + " arrays";
    return false;
  }
  std::string bytes = encodeNpy(type, shape, data);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    error = path + ": cannot write";
    return false;
  }
  return true;
}
