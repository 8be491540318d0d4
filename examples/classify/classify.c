/* classify: run a classification plan on one input and print the top-5 classes.
 *
 *   jetplan_classify model.jplan [input.raw]
 *
 * input.raw holds the input tensor's bytes (e.g. float32 NCHW, already normalized); without it
 * the input is a ramp, which is enough to see the plan run. Uses only the public C API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jetplan/jetplan.h>

static int fail(const char* what, jp_status status) {
  fprintf(stderr, "classify: %s: %s: %s\n", what, jp_status_string(status), jp_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.jplan [input.raw]\n", argv[0]);
    return 2;
  }
  jp_plan* plan = NULL;
  jp_status st = jp_plan_load_file(argv[1], &plan);
  if (st != JP_OK) return fail("load", st);

  jp_tensor_desc in, out;
  if ((st = jp_plan_input_desc(plan, 0, &in)) != JP_OK ||
      (st = jp_plan_output_desc(plan, 0, &out)) != JP_OK) {
    jp_plan_destroy(plan);
    return fail("describe", st);
  }
  int rc = 0;
  jp_context* ctx = NULL;
  float* input = (float*)malloc(in.bytes);
  if (input == NULL) {
    fprintf(stderr, "classify: out of memory\n");
    jp_plan_destroy(plan);
    return 1;
  }
  if (argc > 2) {
    FILE* f = fopen(argv[2], "rb");
    size_t got = f ? fread(input, 1, in.bytes, f) : 0;
    if (f) fclose(f);
    if (got != in.bytes) {
      fprintf(stderr, "classify: '%s' must hold exactly %zu bytes for input '%s'\n", argv[2],
              in.bytes, in.name);
      rc = 1;
      goto done;
    }
  } else {
    for (size_t i = 0; i < in.bytes / sizeof(float); ++i) input[i] = (float)(i % 255) / 255.f;
  }

  if ((st = jp_context_create(plan, NULL, &ctx)) != JP_OK ||
      (st = jp_context_set_input(ctx, 0, input, in.bytes)) != JP_OK ||
      (st = jp_context_run(ctx)) != JP_OK) {
    rc = fail("run", st);
    goto done;
  }
  const void* data = NULL;
  size_t bytes = 0;
  if ((st = jp_context_get_output(ctx, 0, &data, &bytes)) != JP_OK) {
    rc = fail("output", st);
    goto done;
  }
  const float* scores = (const float*)data;
  size_t n = bytes / sizeof(float);
  /* top-5 by insertion into a small sorted list */
  size_t top[5];
  int count = 0;
  for (size_t i = 0; i < n; ++i) {
    int at = count < 5 ? count : 5;
    while (at > 0 && scores[i] > scores[top[at - 1]]) --at;
    if (at >= 5) continue;
    int last = count < 5 ? count : 4;
    for (int j = last; j > at; --j) top[j] = top[j - 1];
    top[at] = i;
    if (count < 5) ++count;
  }
  printf("output '%s': %zu scores; top-%d:\n", out.name, n, count);
  for (int k = 0; k < count; ++k) printf("  #%d class %zu score %.5f\n", k + 1, top[k], scores[top[k]]);
done:
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  free(input);
  return rc;
}
