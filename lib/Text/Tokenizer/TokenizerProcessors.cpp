//===- TokenizerProcessors.cpp - Post-processors of tokenizer.json --------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
// Post-processors add the special tokens of a single sequence or a pair
// ([CLS] A [SEP] B [SEP], <s> A </s></s> B </s>, BOS A, ...) and set the type
// ids. Each returns the parts that are then concatenated, as Hugging Face's
// process_encodings.
//
//===----------------------------------------------------------------------===//

#include "TokenizerInternal.h"

using namespace tfc::rt;
using namespace tfc::rt::tok;

PostProcessor::~PostProcessor() = default;

void Enc::append(const Enc &other) {
  ids.insert(ids.end(), other.ids.begin(), other.ids.end());
  typeIds.insert(typeIds.end(), other.typeIds.begin(), other.typeIds.end());
  special.insert(special.end(), other.special.begin(), other.special.end());
}

namespace {

Enc specialEnc(const std::vector<int32_t> &ids, int32_t typeId) {
  Enc e;
  e.ids = ids;
  e.typeIds.assign(ids.size(), typeId);
  e.special.assign(ids.size(), 1);
  return e;
}

void setTypeIds(Enc &e, int32_t typeId) {
  e.typeIds.assign(e.ids.size(), typeId);
}

} // namespace

size_t TemplateProcessor::addedTokens(bool isPair) const {
  size_t n = 0;
  for (const TemplatePiece &p : isPair ? pair : single) {
    if (p.isSequence)
      continue;
    auto it = specialTokens.find(p.specialId);
    if (it != specialTokens.end())
      n += it->second.ids.size();
  }
  return n;
}

void TemplateProcessor::process(std::vector<Enc> &encodings,
                                bool addSpecialTokens) const {
  bool isPair = encodings.size() > 1;
  std::vector<Enc> parts;
  for (const TemplatePiece &p : isPair ? pair : single) {
    if (p.isSequence) {
      size_t i = p.sequenceB && isPair ? 1 : 0;
      Enc e = encodings[i];
      setTypeIds(e, p.typeId);
      parts.push_back(std::move(e));
    } else if (addSpecialTokens) {
      auto it = specialTokens.find(p.specialId);
      if (it != specialTokens.end())
        parts.push_back(specialEnc(it->second.ids, p.typeId));
    }
  }
  encodings = std::move(parts);
}

size_t BertProcessor::addedTokens(bool isPair) const {
  return isPair ? (roberta ? 4 : 3) : 2;
}

void BertProcessor::process(std::vector<Enc> &encodings,
                            bool addSpecialTokens) const {
  if (roberta)
    for (Enc &e : encodings)
      setTypeIds(e, 0);
  if (!addSpecialTokens)
    return;
  std::vector<Enc> parts;
  Enc first = specialEnc({cls}, 0);
  first.append(encodings[0]);
  first.append(specialEnc({sep}, 0));
  parts.push_back(std::move(first));
  if (encodings.size() > 1) {
    int32_t typeId = roberta ? 0 : 1;
    Enc second;
    if (roberta)
      second = specialEnc({sep}, 0);
    second.append(encodings[1]);
    second.append(specialEnc({sep}, typeId));
    parts.push_back(std::move(second));
  }
  encodings = std::move(parts);
}

size_t SequenceProcessor::addedTokens(bool isPair) const {
  size_t n = 0;
  for (const auto &p : processors)
    n += p->addedTokens(isPair);
  return n;
}

void SequenceProcessor::process(std::vector<Enc> &encodings,
                                bool addSpecialTokens) const {
  for (const auto &p : processors)
    p->process(encodings, addSpecialTokens);
}
