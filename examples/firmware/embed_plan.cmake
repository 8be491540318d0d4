# Writes a plan file as the C99 source of the array examples/firmware reads when built with
# FIRMWARE_EMBEDDED_PLAN: the plan in flash, used in place (256-byte aligned, as JP_LOAD_BORROW
# requires), no file system needed.
#
#   cmake -DPLAN=model.jplan -DOUT=model_plan.c -P embed_plan.cmake
# (jetplan_embed_plan in examples/CMakeLists.txt runs it at build time.)
if(NOT PLAN OR NOT OUT)
  message(FATAL_ERROR "usage: cmake -DPLAN=model.jplan -DOUT=model_plan.c -P embed_plan.cmake")
endif()
file(SIZE "${PLAN}" bytes)
if(bytes EQUAL 0)
  message(FATAL_ERROR "embed_plan: ${PLAN} is empty")
endif()
file(READ "${PLAN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n  " body "${body}")
file(WRITE "${OUT}" "/* Generated from ${PLAN} by examples/firmware/embed_plan.cmake. */
const unsigned char jetplan_embedded_plan[] __attribute__((aligned(256))) = {
  ${body}
};
const unsigned long jetplan_embedded_plan_size = ${bytes}ul;
")
