# Runs PROGRAM with ARGS and fails unless it exits 0 and prints exactly the contents of EXPECTED.
# Usage: cmake -DPROGRAM=... -DARGS=... -DEXPECTED=... -P check_output.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(NOTICE "stdout:\n${out}stderr:\n${err}")
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
file(READ ${EXPECTED} expected)
if(NOT out STREQUAL expected)
  message(NOTICE "--- expected (${EXPECTED})\n${expected}--- got\n${out}")
  message(FATAL_ERROR "${PROGRAM}: the output differs from ${EXPECTED}")
endif()
message(STATUS "${PROGRAM}: the output matches ${EXPECTED}")
