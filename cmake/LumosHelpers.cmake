# lumos_add_test(NAME name SRCS a.cc b.cc DEPS lib... [LABELS l...])
# One gtest binary per library; ctest learns its cases through gtest_discover_tests, under
# gtest's own names (NO_PRETTY_VALUES: no "# GetParam() = <bytes>" tail; parameterised suites
# name their cases, see tests/testing/param_names.h).
include(GoogleTest)
function(lumos_add_test)
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS})
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${T_NAME} PRIVATE
    LUMOS_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    LUMOS_BINARY_DIR="${PROJECT_BINARY_DIR}")
  set(labels ${T_LABELS})
  if(NOT labels)
    set(labels cpu)
  endif()
  gtest_discover_tests(${T_NAME} NO_PRETTY_VALUES
    PROPERTIES LABELS "${labels}" DISCOVERY_TIMEOUT 60)
endfunction()

# lumos_add_library(name ALIAS alias SRCS ... DEPS ... [PUBLIC_DEPS ...])
function(lumos_add_library name)
  cmake_parse_arguments(L "" "ALIAS" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  add_library(${name} STATIC ${L_SRCS})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${L_PUBLIC_DEPS} PRIVATE ${L_DEPS})
  if(L_ALIAS)
    add_library(lumos::${L_ALIAS} ALIAS ${name})
  endif()
endfunction()
