#include "symc/Params.h"
#include <gtest/gtest.h>
TEST(Params, Placeholder) {}
