//===- TokenizerHandle.h - The C API's tokenizer handle ---------*- C++ -*-===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// What a tfc_tokenizer (tfc.h) holds: TokenizerCApi.cpp makes them,
// ChatTemplateCApi.cpp reads them. Private to the runtime layer.
//
//===----------------------------------------------------------------------===//

#ifndef TFC_LIB_RUNTIME_TOKENIZERHANDLE_H
#define TFC_LIB_RUNTIME_TOKENIZERHANDLE_H

#include "tfc/Text/Tokenizer/Tokenizer.h"

#include <memory>

struct tfc_tokenizer {
  std::unique_ptr<tfc::rt::Tokenizer> tokenizer;
};

#endif // TFC_LIB_RUNTIME_TOKENIZERHANDLE_H
