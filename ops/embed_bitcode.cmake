# cmake -DIN=<file.bc> -DOUT=<header.h> -DNAME=<symbol> -DSRC=<file.ll> -P embed_bitcode.cmake
# Writes the bytes of IN as a C array, so the generator carries the bitcode it links.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// Generated from ${SRC} by ops/embed_bitcode.cmake.\n#pragma once\n"
     "static const unsigned char ${NAME}[] = {${bytes}};\nstatic const unsigned int ${NAME}_len = ${len};\n")
