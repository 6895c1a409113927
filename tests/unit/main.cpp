// The doctest main shared by every unit-test executable (tests/unit/*_test.cpp).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
