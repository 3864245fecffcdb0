# Turns an OpenCL C file into a header holding it as a C string:
# cmake -DIN=file.cl -DOUT=file_cl.h -DNAME=radix -P embed.cmake
file(READ ${IN} content HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," content ${content})
file(WRITE ${OUT} "/* generated from ${IN}: do not edit */\nstatic const char gpk_${NAME}_cl_source[] = {${content} 0x00};\n")
