//===- SymbolicShapeTest.cpp - Tests of the frontend's shape checker ------===//
//
// Part of tfc, a transformer compiler on MLIR.
//
//===----------------------------------------------------------------------===//

#include "tfc/Frontend/SymbolicShape.h"

#include <gtest/gtest.h>

using namespace tfc;

namespace {

SymDim n(int64_t v) { return SymDim::of(v); }
SymDim s(const char *name) { return SymDim::named(name); }

TEST(SymbolicShapeTest, Printing) {
  EXPECT_EQ(shapeStr({s("batch"), s("seq"), n(768)}), "[batch, seq, 768]");
  EXPECT_EQ(shapeStr({}), "[]");
}

TEST(SymbolicShapeTest, BroadcastKeepsNames) {
  ShapeResult r = shape::broadcast({s("batch"), s("seq"), n(768)}, {n(768)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(shapeStr(r.shape), "[batch, seq, 768]");

  r = shape::broadcast({s("batch"), n(1), n(1), s("seq")},
                       {s("batch"), n(12), s("seq"), s("seq")});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(shapeStr(r.shape), "[batch, 12, seq, seq]");
}

TEST(SymbolicShapeTest, DifferentNamesDoNotBroadcast) {
  ShapeResult r = shape::broadcast({s("batch"), s("seq"), n(64)},
                                   {s("batch"), s("src_seq"), n(64)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error, "shapes [batch, seq, 64] and [batch, src_seq, 64] do not "
                     "broadcast (seq vs src_seq)");
  // A name never matches a number other than 1.
  EXPECT_FALSE(shape::broadcast({s("seq"), n(64)}, {n(1024), n(64)}).ok());
}

TEST(SymbolicShapeTest, Matmul) {
  ShapeResult r = shape::matmul({s("b"), n(12), s("t"), n(64)},
                                {s("b"), n(12), s("t"), n(64)}, false, true);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(shapeStr(r.shape), "[b, 12, t, t]");
  r = shape::matmul({s("b"), s("t"), n(64)}, {n(32), n(48)}, false, false);
  EXPECT_EQ(r.error,
            "contraction sizes differ: lhs [b, t, 64] and rhs [32, 48] (64 vs "
            "32)");
}

TEST(SymbolicShapeTest, LinearAndEmbedding) {
  SymShape bias = {n(3072)};
  ShapeResult r = shape::linear({s("b"), s("t"), n(768)}, {n(3072), n(768)},
                                &bias);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(shapeStr(r.shape), "[b, t, 3072]");
  SymShape badBias = {n(768)};
  EXPECT_FALSE(
      shape::linear({s("b"), n(768)}, {n(3072), n(768)}, &badBias).ok());
  r = shape::embedding({n(50257), n(768)}, {s("b"), s("t")});
  EXPECT_EQ(shapeStr(r.shape), "[b, t, 768]");
}

TEST(SymbolicShapeTest, AttentionGqaCrossAndMasks) {
  SymShape mask = {s("b"), n(1), n(1), s("src")};
  ShapeResult r = shape::attention({s("b"), n(32), s("t"), n(64)},
                                   {s("b"), n(4), s("src"), n(64)},
                                   {s("b"), n(4), s("src"), n(64)}, &mask);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(shapeStr(r.shape), "[b, 32, t, 64]");

  EXPECT_FALSE(shape::attention({s("b"), n(6), s("t"), n(64)},
                                {s("b"), n(4), s("t"), n(64)},
                                {s("b"), n(4), s("t"), n(64)}, nullptr)
                   .ok());
  SymShape wrongMask = {s("b"), n(1), n(1), s("t")};
  r = shape::attention({s("b"), n(8), s("t"), n(64)},
                       {s("b"), n(8), s("src"), n(64)},
                       {s("b"), n(8), s("src"), n(64)}, &wrongMask);
  EXPECT_EQ(r.error, "mask [b, 1, 1, t] does not broadcast to the scores "
                     "[batch, heads, q_len, kv_len] = [b, 8, t, src]");
}

TEST(SymbolicShapeTest, HeadsMustDivide) {
  ShapeResult r = shape::splitHeads({s("b"), s("t"), n(768)}, 12);
  EXPECT_EQ(shapeStr(r.shape), "[b, 12, t, 64]");
  r = shape::splitHeads({s("b"), s("t"), n(770)}, 12);
  EXPECT_EQ(r.error,
            "features 770 are not divisible by 12 heads ([b, t, 770])");
  r = shape::mergeHeads({s("b"), n(12), s("t"), n(64)});
  EXPECT_EQ(shapeStr(r.shape), "[b, t, 768]");
}

TEST(SymbolicShapeTest, ReshapeCountsSymbolsAndNumbers) {
  EXPECT_TRUE(shape::reshape({s("b"), s("t"), n(768)},
                             {s("b"), s("t"), n(12), n(64)})
                  .ok());
  EXPECT_FALSE(shape::reshape({s("b"), s("t"), n(768)},
                              {s("b"), s("t"), n(12), n(32)})
                   .ok());
  // Names must match on both sides: t cannot become 2.
  EXPECT_FALSE(shape::reshape({s("b"), s("t")}, {s("b"), n(2)}).ok());
}

TEST(SymbolicShapeTest, ReduceTransposeSlice) {
  EXPECT_EQ(shapeStr(shape::reduce({s("b"), s("t"), n(8)}, -1, true).shape),
            "[b, t, 1]");
  EXPECT_EQ(shapeStr(shape::reduce({s("b"), s("t"), n(8)}, 1, false).shape),
            "[b, 8]");
  EXPECT_FALSE(shape::reduce({s("b")}, 1, false).ok());
  EXPECT_EQ(
      shapeStr(shape::transpose({s("b"), s("t"), n(12), n(64)}, {0, 2, 1, 3})
                   .shape),
      "[b, 12, t, 64]");
  EXPECT_FALSE(shape::transpose({s("b"), s("t")}, {0, 0}).ok());
  EXPECT_EQ(shapeStr(shape::slice({s("b"), s("t"), n(2304)}, -1, 768, 768)
                         .shape),
            "[b, t, 768]");
  EXPECT_FALSE(shape::slice({s("b"), n(8)}, 1, 6, 4).ok());
  EXPECT_TRUE(shape::slice({s("b"), s("t")}, 1, 0, 1).ok()); // checked at run time
  EXPECT_EQ(shape::normalizeAxis(-1, 3), 2);
  EXPECT_FALSE(shape::normalizeAxis(3, 3).has_value());
}

} // namespace
