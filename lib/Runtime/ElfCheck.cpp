//===- ElfCheck.cpp - Validating a model library before dlopen ------------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Reads with pread only (no mapping, so a file that shrinks meanwhile cannot
// fault here either), every offset and size checked for overflow against
// the file size before use.
//
//===----------------------------------------------------------------------===//

#include "ElfCheck.h"

#include "tfc/Formats/Files.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <unistd.h>
#include <vector>

using namespace tfc::rt;

namespace {

/// Section tables larger than this are not a model library.
constexpr uint64_t kMaxTableBytes = uint64_t(256) << 20;

/// [offset, offset + size) lies within a file of `fileSize` bytes.
bool within(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Reader {
public:
  Reader(int fd, uint64_t size) : fd(fd), size(size) {}
  ~Reader() { ::close(fd); }

  /// Reads `what`, [offset, offset + n), into `out`; it must lie within
  /// the file.
  bool read(uint64_t offset, void *out, uint64_t n, const char *what,
            std::string &error) {
    if (!within(offset, n, size)) {
      error = std::string("the file is truncated or corrupt: ") + what +
              " need bytes [" + std::to_string(offset) + ", " +
              std::to_string(offset + n) + ") of a " + std::to_string(size) +
              "-byte file";
      return false;
    }
    auto *p = static_cast<char *>(out);
    uint64_t done = 0;
    while (done < n) {
      ssize_t r =
          ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0) {
        error = std::string("cannot read: ") +
                (r < 0 ? std::strerror(errno) : "unexpected end of file");
        return false;
      }
      done += static_cast<uint64_t>(r);
    }
    return true;
  }

  const int fd;
  const uint64_t size;
};

bool hostIsLittleEndian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

} // namespace

ElfCheck tfc::rt::checkModelLibrary(const std::string &path, const char *symbol,
                                    std::string &error) {
  uint64_t fileSize = 0;
  std::string openError;
  int fd = openRegularFile(path, fileSize, openError);
  if (fd < 0) {
    // openRegularFile's message starts with the path.
    error = openError.substr(std::min(openError.size(), path.size() + 2));
    return ElfCheck::Malformed;
  }
  Reader file(fd, fileSize);

  Elf64_Ehdr eh;
  if (fileSize < EI_NIDENT) {
    error = "not an ELF file (" + std::to_string(fileSize) + " bytes)";
    return ElfCheck::Malformed;
  }
  unsigned char ident[EI_NIDENT];
  if (!file.read(0, ident, EI_NIDENT, "the ELF identification", error))
    return ElfCheck::Malformed;
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    error = "not an ELF file";
    return ElfCheck::Malformed;
  }
  if (ident[EI_CLASS] != ELFCLASS64) {
    error = "not a 64-bit ELF file";
    return ElfCheck::Malformed;
  }
  if (ident[EI_DATA] != (hostIsLittleEndian() ? ELFDATA2LSB : ELFDATA2MSB)) {
    error = "an ELF file of the other byte order";
    return ElfCheck::Malformed;
  }
  if (!file.read(0, &eh, sizeof eh, "the ELF header", error))
    return ElfCheck::Malformed;
  if (eh.e_type != ET_DYN) {
    error = "not a shared library (ELF type " + std::to_string(eh.e_type) + ")";
    return ElfCheck::Malformed;
  }

  // Program headers: every loadable segment's file data and the dynamic
  // section within the file (dlopen maps them; a page past the end of the
  // file faults with SIGBUS when touched).
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    error = "the file is truncated or corrupt: no usable program headers";
    return ElfCheck::Malformed;
  }
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  if (!file.read(eh.e_phoff, phdrs.data(),
                 uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr),
                 "the program headers", error))
    return ElfCheck::Malformed;
  bool haveLoad = false;
  for (size_t i = 0; i < phdrs.size(); ++i) {
    const Elf64_Phdr &ph = phdrs[i];
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC)
      continue;
    haveLoad |= ph.p_type == PT_LOAD;
    if (!within(ph.p_offset, ph.p_filesz, fileSize)) {
      error = "the file is truncated or corrupt: " +
              std::string(ph.p_type == PT_LOAD ? "a loadable segment"
                                               : "the dynamic segment") +
              " (program header " + std::to_string(i) + ") needs bytes [" +
              std::to_string(ph.p_offset) + ", " +
              std::to_string(ph.p_offset + ph.p_filesz) + ") of a " +
              std::to_string(fileSize) + "-byte file";
      return ElfCheck::Malformed;
    }
    if (ph.p_type == PT_LOAD && ph.p_filesz > ph.p_memsz) {
      error = "the file is corrupt: loadable segment " + std::to_string(i) +
              " has more file data than memory";
      return ElfCheck::Malformed;
    }
  }
  if (!haveLoad) {
    error = "the file is corrupt: no loadable segment";
    return ElfCheck::Malformed;
  }

  // The dynamic symbol table, from the section headers (tfc-compile's
  // libraries always have them).
  if (eh.e_shnum == 0 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
    error = "the file has no section headers (not a library tfc-compile "
            "writes)";
    return ElfCheck::Malformed;
  }
  std::vector<Elf64_Shdr> shdrs(eh.e_shnum);
  if (!file.read(eh.e_shoff, shdrs.data(),
                 uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr),
                 "the section headers", error))
    return ElfCheck::Malformed;
  const Elf64_Shdr *dynsym = nullptr;
  for (const Elf64_Shdr &sh : shdrs)
    if (sh.sh_type == SHT_DYNSYM)
      dynsym = &sh;
  if (!dynsym) {
    error = "the file has no dynamic symbol table";
    return ElfCheck::NoSymbol;
  }
  if (dynsym->sh_entsize != sizeof(Elf64_Sym) ||
      dynsym->sh_link >= shdrs.size() || dynsym->sh_size > kMaxTableBytes ||
      shdrs[dynsym->sh_link].sh_size > kMaxTableBytes) {
    error = "the file is corrupt: a malformed dynamic symbol table";
    return ElfCheck::Malformed;
  }
  const Elf64_Shdr &strtab = shdrs[dynsym->sh_link];
  std::vector<Elf64_Sym> syms(dynsym->sh_size / sizeof(Elf64_Sym));
  std::string names(strtab.sh_size, '\0');
  if (!file.read(dynsym->sh_offset, syms.data(),
                 syms.size() * sizeof(Elf64_Sym), "the dynamic symbols",
                 error) ||
      !file.read(strtab.sh_offset, names.data(), names.size(),
                 "the dynamic symbol names", error))
    return ElfCheck::Malformed;
  size_t symbolLength = std::strlen(symbol);
  for (const Elf64_Sym &sym : syms) {
    if (sym.st_name >= names.size() ||
        names.compare(sym.st_name, symbolLength + 1,
                      std::string(symbol, symbolLength + 1)) != 0)
      continue;
    if (sym.st_shndx == SHN_UNDEF)
      break;
    // Its bytes must be file data of a loadable segment.
    for (const Elf64_Phdr &ph : phdrs)
      if (ph.p_type == PT_LOAD && sym.st_value >= ph.p_vaddr &&
          within(sym.st_value - ph.p_vaddr, sym.st_size, ph.p_filesz))
        return ElfCheck::Ok;
    error = "the file is corrupt: '" + std::string(symbol) + "' at " +
            hex(sym.st_value) + " (" + std::to_string(sym.st_size) +
            " bytes) is not in the file's data";
    return ElfCheck::Malformed;
  }
  error = "it does not export '" + std::string(symbol) + "'";
  return ElfCheck::NoSymbol;
}
