// The one translation unit that instantiates Catch2's runner; every other
// tests/unit/test_*.cpp file only defines test cases.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
