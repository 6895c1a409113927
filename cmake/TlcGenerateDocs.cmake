# Writes tlc's man page and shell completion scripts from the built tlc (the option definitions
# are the single source): cmake -DTLC=<tlc> -DOUT=<dir> -P TlcGenerateDocs.cmake
foreach(pair "--help-man=tlc.1" "--completion=bash=tlc.bash" "--completion=zsh=_tlc")
  string(REGEX MATCH "^(.*)=([^=]+)$" _ "${pair}")
  execute_process(COMMAND ${TLC} ${CMAKE_MATCH_1} OUTPUT_FILE ${OUT}/${CMAKE_MATCH_2}
                  RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "`tlc ${CMAKE_MATCH_1}` failed (${result})")
  endif()
endforeach()
