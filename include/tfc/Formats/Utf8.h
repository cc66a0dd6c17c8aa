//===- Utf8.h - Encoding code points as UTF-8 -------------------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// One UTF-8 encoder for the JSON reader, the tokenizers and the chat
// templates. Header-only, plain C++17.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_FORMATS_UTF8_H
#define TFC_FORMATS_UTF8_H

#include <cstdint>
#include <string>

namespace tfc::rt {

/// Appends the UTF-8 encoding of the code point `cp` (at most U+10FFFF; the
/// callers check) to `out`.
inline void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

} // namespace tfc::rt

#endif // TFC_FORMATS_UTF8_H
