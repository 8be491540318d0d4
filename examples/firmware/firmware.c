/* firmware: the shape of jetplan inside a control loop on a device without a heap budget.
 *
 *   jetplan_firmware model.jplan [cycles]
 *
 * In firmware the plan sits in flash and is used in place (JP_LOAD_BORROW); here it is read once
 * into a static, 256-byte-aligned buffer to stand in for flash. The arena is a static buffer too,
 * sized at build time from the number jetplan-convert printed; nothing is allocated per cycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jetplan/jetplan.h>

#define PLAN_CAPACITY (8u << 20)  /* the largest plan this firmware image can hold */
#define ARENA_CAPACITY (8u << 20) /* >= the plan's arena bytes, from jetplan-convert's report */

static unsigned char g_plan_flash[PLAN_CAPACITY] __attribute__((aligned(256)));
static unsigned char g_arena[ARENA_CAPACITY] __attribute__((aligned(256)));
static float g_input[1u << 20];

static void log_to_console(void* user, jp_log_level level, const char* msg) {
  (void)user;
  fprintf(stderr, "[jetplan %s] %s\n", level == JP_LOG_ERROR ? "error" : "warn", msg);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.jplan [cycles]\n", argv[0]);
    return 2;
  }
  int cycles = argc > 2 ? atoi(argv[2]) : 10;
  jp_set_log_callback(log_to_console, NULL);

  FILE* f = fopen(argv[1], "rb");
  if (f == NULL) {
    fprintf(stderr, "firmware: cannot open %s\n", argv[1]);
    return 1;
  }
  size_t plan_bytes = fread(g_plan_flash, 1, sizeof(g_plan_flash), f);
  int too_big = fgetc(f) != EOF;
  fclose(f);
  if (too_big) {
    fprintf(stderr, "firmware: plan is larger than the %u-byte flash region\n", PLAN_CAPACITY);
    return 1;
  }

  jp_plan* plan = NULL;
  if (jp_plan_load_buffer(g_plan_flash, plan_bytes, JP_LOAD_BORROW, &plan) != JP_OK) return 1;
  jp_context_options options = {g_arena, sizeof(g_arena), 0, NULL};
  jp_context* ctx = NULL;
  jp_tensor_desc in;
  if (jp_context_create(plan, &options, &ctx) != JP_OK ||
      jp_plan_input_desc(plan, 0, &in) != JP_OK || in.bytes > sizeof(g_input)) {
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
    return 1;
  }

  int rc = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    /* a sensor read would fill g_input here */
    for (size_t i = 0; i < in.bytes / sizeof(float); ++i) g_input[i] = (float)((i + cycle) % 7) / 7.f;
    const void* out = NULL;
    size_t out_bytes = 0;
    if (jp_context_set_input(ctx, 0, g_input, in.bytes) != JP_OK || jp_context_run(ctx) != JP_OK ||
        jp_context_get_output(ctx, 0, &out, &out_bytes) != JP_OK) {
      rc = 1; /* the detail went to log_to_console */
      break;
    }
    printf("cycle %d: output[0] = %.5f (%zu bytes)\n", cycle, ((const float*)out)[0], out_bytes);
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return rc;
}
