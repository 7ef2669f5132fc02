# Run after unit_tests is linked (cmake -D BINARY=... -D OUTPUT=... -P suites.cmake): lists its
# test suites and writes one CTest test per suite, each running that suite's tests in one
# process. Under the sanitizers a process takes about 0.1 s to start and stop, so one per test
# (573 of them) cost more than the tests themselves.
execute_process(COMMAND ${BINARY} --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BINARY} --gtest_list_tests failed (${status}):\n${listing}")
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(script "")
foreach(line IN LISTS lines)
  # A suite's line is its name and a dot, unindented; its tests follow, indented.
  if(line MATCHES "^([^ #][^ ]*)\\.( |$)")
    string(APPEND script "add_test([==[${CMAKE_MATCH_1}]==] [==[${BINARY}]==] "
                         "[==[--gtest_filter=${CMAKE_MATCH_1}.*]==])\n")
  endif()
endforeach()
if(script STREQUAL "")
  message(FATAL_ERROR "${BINARY} lists no test suite")
endif()
file(WRITE ${OUTPUT} "${script}")
