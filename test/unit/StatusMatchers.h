//===- StatusMatchers.h - GoogleTest helpers for runtime Status -*- C++ -*-===//
#ifndef ATTN_TEST_UNIT_STATUSMATCHERS_H
#define ATTN_TEST_UNIT_STATUSMATCHERS_H

#include "runtime/Tensor.h"

#include <gtest/gtest.h>

#include <string>

/// Expects `statusExpr` to fail with a message containing every given part.
#define EXPECT_ERROR(statusExpr, ...)                                          \
  do {                                                                         \
    ::attn::runtime::Status status_ = (statusExpr);                            \
    EXPECT_FALSE(status_.isOk());                                              \
    for (const char *part_ : {__VA_ARGS__})                                    \
      EXPECT_NE(status_.message().find(part_), std::string::npos)              \
          << "message \"" << status_.message() << "\" lacks \"" << part_       \
          << "\"";                                                             \
  } while (false)

/// Asserts that `statusExpr` succeeded, printing its message otherwise.
#define ASSERT_OK(statusExpr)                                                  \
  do {                                                                         \
    ::attn::runtime::Status status_ = (statusExpr);                            \
    ASSERT_TRUE(status_.isOk()) << status_.message();                          \
  } while (false)

#endif // ATTN_TEST_UNIT_STATUSMATCHERS_H
