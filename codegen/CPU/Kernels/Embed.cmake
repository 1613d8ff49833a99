# Writes OUTPUT, a C++ source defining kSymcKernelBitcode with INPUT's bytes.
file(READ "${INPUT}" hex HEX)
file(SIZE "${INPUT}" size)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by Embed.cmake.\n"
  "extern const unsigned char kSymcKernelBitcode[];\n"
  "extern const unsigned long kSymcKernelBitcodeSize;\n"
  "alignas(8) const unsigned char kSymcKernelBitcode[] = {${bytes}};\n"
  "const unsigned long kSymcKernelBitcodeSize = ${size};\n")
