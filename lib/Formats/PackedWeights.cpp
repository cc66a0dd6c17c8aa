//===- PackedWeights.cpp - A model's weights in their resident form -------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Reading, checking and writing packed weights files (PackedWeights.h). The
// reader trusts nothing in the file: every count and offset is checked
// against the file's real size before anything is read through it.
//
//===----------------------------------------------------------------------===//

#include "tfc/Formats/PackedWeights.h"

#include "tfc/Formats/Files.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tfc::rt;

namespace {

/// `v` rounded up to a multiple of the power of two `a`: the file's offsets.
constexpr uint64_t alignUp(uint64_t v, uint64_t a) {
  return (v + a - 1) & ~(a - 1);
}

constexpr char kMagic[8] = {'T', 'F', 'C', 'P', 'A', 'C', 'K', '\0'};

uint64_t readU64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t readU32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void appendU64(std::string &out, uint64_t v) {
  out.append(reinterpret_cast<const char *>(&v), 8);
}

void appendU32(std::string &out, uint32_t v) {
  out.append(reinterpret_cast<const char *>(&v), 4);
}

} // namespace

bool tfc::rt::parsePackedWeights(std::string_view bytes, PackedHeader &out,
                                 std::string &error) {
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.data());
  uint64_t size = bytes.size();
  if (size < kPackedWeightsHeaderBytes ||
      std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    error = "not a packed weights file (expected the magic \"TFCPACK\" and a "
            "header of " +
            std::to_string(kPackedWeightsHeaderBytes) + " bytes)";
    return false;
  }
  uint32_t version = readU32(p + 8), flags = readU32(p + 12);
  if (version != kPackedWeightsVersion) {
    error = "format version " + std::to_string(version) +
            " is not supported (expected " +
            std::to_string(kPackedWeightsVersion) + "); pack the weights "
            "again with this tfc";
    return false;
  }
  if (flags != 0) {
    error = "unknown flags " + std::to_string(flags) + " (expected 0)";
    return false;
  }
  out.key = readU64(p + 16);
  uint64_t count = readU64(p + 24), recorded = readU64(p + 32);
  if (recorded != size) {
    error = "the header records " + std::to_string(recorded) +
            " bytes but the file has " + std::to_string(size) +
            " (truncated or appended to)";
    return false;
  }
  if (count > (size - kPackedWeightsHeaderBytes) / 16) {
    error = "the header declares " + std::to_string(count) +
            " slots, more than the file can hold";
    return false;
  }
  uint64_t tableEnd = kPackedWeightsHeaderBytes + count * 16;
  out.slots.assign(count, PackedSlot());
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t *e = p + kPackedWeightsHeaderBytes + i * 16;
    PackedSlot s{readU64(e), readU64(e + 8)};
    std::string where = "slot " + std::to_string(i) + ": ";
    if (s.bytes == 0) {
      if (s.offset != 0) {
        error = where + "no bytes but offset " + std::to_string(s.offset) +
                " (expected 0)";
        return false;
      }
      continue;
    }
    if (s.offset % kPackedWeightsAlign != 0) {
      error = where + "offset " + std::to_string(s.offset) +
              " is not a multiple of " + std::to_string(kPackedWeightsAlign);
      return false;
    }
    if (s.offset < tableEnd || s.offset > size || s.bytes > size - s.offset) {
      error = where + "bytes [" + std::to_string(s.offset) + ", +" +
              std::to_string(s.bytes) + ") run outside the data section [" +
              std::to_string(tableEnd) + ", " + std::to_string(size) + ")";
      return false;
    }
    out.slots[i] = s;
  }
  return true;
}

PackedWeightsFile::~PackedWeightsFile() = default;

std::unique_ptr<PackedWeightsFile>
PackedWeightsFile::open(const std::string &path, std::string &error) {
  std::unique_ptr<PackedWeightsFile> file(new PackedWeightsFile());
  file->path_ = path;
  if (!file->mapping_.map(path, error))
    return nullptr;
  if (!file->mapping_.mapped()) {
    error = path + ": the file is empty (expected packed weights)";
    return nullptr;
  }
  const uint8_t *m = file->mapping_.data();
  uint64_t size = file->mapping_.size();
  std::string why;
  if (!parsePackedWeights(
          std::string_view(reinterpret_cast<const char *>(m), size),
          file->header_, why)) {
    error = path + ": " + why;
    return nullptr;
  }
  // Cold loads read the file front to back: start the read-ahead now.
  madvise(const_cast<uint8_t *>(m), size, MADV_WILLNEED);
  return file;
}

const void *PackedWeightsFile::slotData(size_t i) const {
  if (i >= header_.slots.size() || header_.slots[i].bytes == 0)
    return nullptr;
  return mapping_.data() + header_.slots[i].offset;
}

bool tfc::rt::isPackedWeightsFile(const std::string &path) {
  uint64_t size = 0;
  std::string ignored;
  int fd = openRegularFile(path, size, ignored);
  if (fd < 0)
    return false;
  char magic[sizeof(kMagic)];
  bool yes = size >= sizeof(kMagic) &&
             ::pread(fd, magic, sizeof(magic), 0) ==
                 static_cast<ssize_t>(sizeof(magic)) &&
             std::memcmp(magic, kMagic, sizeof(kMagic)) == 0;
  ::close(fd);
  return yes;
}

bool tfc::rt::writePackedWeights(
    const std::string &path, uint64_t key,
    const std::vector<std::pair<const void *, uint64_t>> &slots,
    std::string &error,
    const std::function<void(const void *, uint64_t)> &written) {
  // The layout first: offsets after the slot table, each aligned.
  uint64_t offset =
      alignUp(kPackedWeightsHeaderBytes + slots.size() * 16, 4096);
  std::vector<PackedSlot> table;
  for (const auto &[data, bytes] : slots) {
    if (!data || bytes == 0) {
      table.push_back({0, 0});
      continue;
    }
    // Large slots start on a page so that each is mapped on its own pages.
    offset = alignUp(offset, bytes >= 4096 ? 4096 : kPackedWeightsAlign);
    table.push_back({offset, bytes});
    offset += bytes;
  }
  uint64_t total = offset;

  std::string header(kMagic, sizeof(kMagic));
  appendU32(header, kPackedWeightsVersion);
  appendU32(header, 0);
  appendU64(header, key);
  appendU64(header, slots.size());
  appendU64(header, total);
  for (const PackedSlot &s : table) {
    appendU64(header, s.offset);
    appendU64(header, s.bytes);
  }

  return writeFileWhole(
      path,
      [&](int fd) {
        if (!writeAll(fd, header.data(), header.size()))
          return false;
        uint64_t position = header.size();
        static const char zeros[4096] = {};
        for (size_t i = 0; i < slots.size(); ++i) {
          if (table[i].bytes == 0)
            continue;
          while (position < table[i].offset) {
            uint64_t n =
                std::min<uint64_t>(table[i].offset - position, sizeof(zeros));
            if (!writeAll(fd, zeros, n))
              return false;
            position += n;
          }
          const auto *data = static_cast<const char *>(slots[i].first);
          for (uint64_t done = 0; done < table[i].bytes;) {
            uint64_t n =
                std::min<uint64_t>(table[i].bytes - done, kPackedWriteChunk);
            if (!writeAll(fd, data + done, n))
              return false;
            if (written)
              written(data + done, n);
            done += n;
          }
          position += table[i].bytes;
        }
        return true;
      },
      error);
}

bool tfc::rt::hashLibraryFile(const std::string &path, uint64_t &key,
                              std::string &error) {
  MappedFile file;
  if (!file.map(path, error))
    return false;
  // FNV-1a over 64-bit little-endian words (the tail zero-padded), then the
  // length: a change of any byte changes the key.
  uint64_t h = 0xcbf29ce484222325ull;
  const uint64_t prime = 0x100000001b3ull;
  const uint8_t *p = file.data();
  uint64_t size = file.size(), i = 0;
  for (; i + 8 <= size; i += 8)
    h = (h ^ readU64(p + i)) * prime;
  if (i < size) {
    uint8_t tail[8] = {};
    std::memcpy(tail, p + i, size - i);
    h = (h ^ readU64(tail)) * prime;
  }
  key = (h ^ size) * prime;
  return true;
}
