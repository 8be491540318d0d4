/* firmware: jetplan inside a fixed-period control loop, the way robotics firmware links it.
 *
 *   jetplan_firmware model.jplan [cycles (10)] [period_us (10000)]
 *   (built with the plan inside, FIRMWARE_EMBEDDED_PLAN, the first argument only names it)
 *
 * C99, linked statically through the C API only (jetplan::jetplan_static). Everything the
 * library uses is static memory handed in at start-up:
 *   - the plan sits in a 256-byte-aligned "flash" region and is used in place (JP_LOAD_BORROW).
 *     Here it is read from a file into that region; an image built with the plan linked in
 *     (jetplan_embed_plan in examples/CMakeLists.txt defines FIRMWARE_EMBEDDED_PLAN) skips
 *     the file;
 *   - the library's own bookkeeping (plan tables, the context) comes from a static pool
 *     (jp_set_allocator), so it never calls malloc;
 *   - the activation arena is a static buffer (jp_context_options).
 * After initialisation nothing is allocated: a cycle writes the input, runs, reads the output.
 * Cycles are released every period_us on CLOCK_MONOTONIC by absolute sleeps (no drift); a cycle
 * that ends after its deadline (the next release) is a deadline miss, counted, and the releases
 * it overran are skipped, never queued. Every failure ends the program with status 1 and the
 * library's message; a bad command line with status 2. */
#define _POSIX_C_SOURCE 200112L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jetplan/jetplan.h>

#define PLAN_CAPACITY (8u << 20)   /* the largest plan this firmware image can hold */
#define ARENA_CAPACITY (8u << 20)  /* >= jp_plan_arena_bytes (jetplan-convert prints it) */
#define POOL_CAPACITY (16u << 20)  /* the library's bookkeeping and prepared weights */
#define INPUT_FLOATS (1u << 20)

static unsigned char g_arena[ARENA_CAPACITY] __attribute__((aligned(256)));
static unsigned char g_pool[POOL_CAPACITY] __attribute__((aligned(256)));
static float g_input[INPUT_FLOATS];

#ifdef FIRMWARE_EMBEDDED_PLAN
extern const unsigned char jetplan_embedded_plan[]; /* 256-byte aligned, generated */
extern const unsigned long jetplan_embedded_plan_size;
#else
static unsigned char g_flash[PLAN_CAPACITY] __attribute__((aligned(256)));
#endif

/* Tests link tests/examples/heap_probe.c, which interposes malloc, calloc, realloc, free and the
   aligned allocators and counts their calls while armed. A firmware image leaves these
   undefined: weak references, null. */
void heap_probe_arm(int armed) __attribute__((weak));
long heap_probe_calls(void) __attribute__((weak));

/* ---- the static pool behind jp_set_allocator: a bump allocator (firmware allocates once) ---- */

static size_t g_pool_used;
static long g_pool_calls; /* allocations and releases */

static void* pool_allocate(void* user, size_t bytes, size_t alignment) {
  size_t start;
  (void)user;
  ++g_pool_calls;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 256) return NULL;
  start = (g_pool_used + alignment - 1) & ~(alignment - 1);
  if (start > POOL_CAPACITY || bytes > POOL_CAPACITY - start) return NULL;
  g_pool_used = start + bytes;
  return g_pool + start;
}

static void pool_deallocate(void* user, void* ptr) {
  (void)user;
  (void)ptr; /* not reused: the pool is reset only by a restart */
  ++g_pool_calls;
}

static void log_to_console(void* user, jp_log_level level, const char* msg) {
  (void)user;
  fprintf(stderr, "[jetplan %s] %s\n", level == JP_LOG_ERROR ? "error" : "warn", msg);
}

/* Prints what failed and the library's detail; returns 1 (the exit status). */
static int failed(const char* what, jp_status status) {
  fprintf(stderr, "firmware: %s: %s: %s\n", what, jp_status_string(status), jp_last_error());
  return 1;
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_until(long long ns) {
  struct timespec t;
  t.tv_sec = (time_t)(ns / 1000000000LL);
  t.tv_nsec = (long)(ns % 1000000000LL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
  }
}

/* The plan's bytes in "flash": the linked-in array, or the file read into g_flash. */
static int plan_in_flash(const char* path, const unsigned char** plan, size_t* bytes) {
#ifdef FIRMWARE_EMBEDDED_PLAN
  (void)path;
  *plan = jetplan_embedded_plan;
  *bytes = (size_t)jetplan_embedded_plan_size;
  return 0;
#else
  FILE* f = fopen(path, "rb");
  int too_big;
  if (f == NULL) {
    fprintf(stderr, "firmware: cannot open plan '%s': %s\n", path, strerror(errno));
    return 1;
  }
  *bytes = fread(g_flash, 1, sizeof(g_flash), f);
  too_big = fgetc(f) != EOF;
  if (ferror(f)) {
    fprintf(stderr, "firmware: cannot read plan '%s'\n", path);
    fclose(f);
    return 1;
  }
  fclose(f);
  if (too_big) {
    fprintf(stderr, "firmware: plan '%s' is larger than the %u-byte flash region\n", path,
            PLAN_CAPACITY);
    return 1;
  }
  *plan = g_flash;
  return 0;
#endif
}

struct loop_stats {
  long misses, skipped;
  long long worst_ns, total_ns;
  float first, last;
};

/* The control loop: `cycles` cycles released every period_ns. Returns 0, or 1 after a failure
   (printed). */
static int control_loop(jp_context* ctx, const jp_tensor_desc* in, long cycles, long long period_ns,
                        struct loop_stats* s) {
  const size_t floats = in->bytes / sizeof(float);
  long long release = now_ns();
  long cycle;
  size_t i;
  for (cycle = 0; cycle < cycles; ++cycle) {
    long long start, end, deadline;
    const void* out = NULL;
    size_t out_bytes = 0;
    jp_status status;
    sleep_until(release);
    start = now_ns();
    /* A sensor read would fill the input here. */
    for (i = 0; i < floats; ++i) g_input[i] = (float)((i + (size_t)cycle) % 7) / 7.f;
    if ((status = jp_context_set_input(ctx, 0, g_input, in->bytes)) != JP_OK)
      return failed("writing the input", status);
    if ((status = jp_context_run(ctx)) != JP_OK) return failed("running the plan", status);
    if ((status = jp_context_get_output(ctx, 0, &out, &out_bytes)) != JP_OK)
      return failed("reading the output", status);
    s->last = out_bytes >= sizeof(float) ? ((const float*)out)[0] : 0.f;
    if (cycle == 0) s->first = s->last;
    /* An actuator command would go out here. */
    end = now_ns();
    s->total_ns += end - start;
    if (end - start > s->worst_ns) s->worst_ns = end - start;
    deadline = release + period_ns;
    if (end > deadline) {
      const long long overran = (end - deadline) / period_ns + 1; /* releases already past */
      ++s->misses;
      s->skipped += (long)overran - 1;
      release = deadline + overran * period_ns;
    } else {
      release = deadline;
    }
  }
  return 0;
}

/* Positive whole number, or -1. */
static long parse_count(const char* text) {
  char* end = NULL;
  const long v = strtol(text, &end, 10);
  return end != text && *end == '\0' && v > 0 ? v : -1;
}

int main(int argc, char** argv) {
  const jp_allocator pool = {pool_allocate, pool_deallocate, NULL};
  const unsigned char* flash = NULL;
  size_t plan_bytes = 0;
  long cycles, period_us, heap_before = 0, pool_before;
  int on_cpu;
  jp_plan* plan = NULL;
  jp_context* ctx = NULL;
  jp_context_options options;
  jp_tensor_desc in;
  jp_status status;
  struct loop_stats stats;
  int rc;

  cycles = argc > 2 ? parse_count(argv[2]) : 10;
  period_us = argc > 3 ? parse_count(argv[3]) : 10000;
  if (argc < 2 || argc > 4 || cycles < 0 || period_us < 0) {
    fprintf(stderr, "usage: %s model.jplan [cycles (10)] [period_us (10000)]\n", argv[0]);
    return 2;
  }
  if (heap_probe_arm != NULL) heap_probe_arm(1); /* tests: count start-up too */
  jp_set_log_callback(log_to_console, NULL);
  jp_set_allocator(&pool);
  if (plan_in_flash(argv[1], &flash, &plan_bytes) != 0) return 1;

  if ((status = jp_plan_load_buffer(flash, plan_bytes, JP_LOAD_BORROW, &plan)) != JP_OK)
    return failed("loading the plan", status);
  memset(&options, 0, sizeof options);
  on_cpu = strcmp(jp_plan_device_name(plan), "cpu") == 0;
  if (on_cpu) { /* a CUDA plan's arena is GPU memory: its context allocates it, here, once */
    options.arena = g_arena;
    options.arena_bytes = sizeof(g_arena);
  }
  rc = 1;
  if (on_cpu && jp_plan_arena_bytes(plan) > sizeof(g_arena)) {
    fprintf(stderr, "firmware: the plan's arena of %lu bytes does not fit the %u-byte region\n",
            (unsigned long)jp_plan_arena_bytes(plan), ARENA_CAPACITY);
  } else if ((status = jp_context_create(plan, &options, &ctx)) != JP_OK) {
    failed("creating the context", status);
  } else if ((status = jp_plan_input_desc(plan, 0, &in)) != JP_OK) {
    failed("reading input 0", status);
  } else if (in.dtype != JP_FLOAT32 || in.bytes > sizeof(g_input)) {
    fprintf(stderr, "firmware: input 0 must be Float32 of at most %u floats\n", INPUT_FLOATS);
  } else {
    rc = 0;
  }
  if (rc != 0) {
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
    return rc;
  }
  printf("firmware: plan %s (%s), %lu bytes in flash, arena %lu of %u bytes, pool %lu bytes\n",
         argv[1], jp_plan_device_name(plan), (unsigned long)plan_bytes,
         (unsigned long)jp_plan_arena_bytes(plan), ARENA_CAPACITY, (unsigned long)g_pool_used);
  fflush(stdout); /* stdout's buffer exists from here on: printing later allocates nothing */

  memset(&stats, 0, sizeof stats);
  if (heap_probe_calls != NULL) heap_before = heap_probe_calls();
  pool_before = g_pool_calls;
  rc = control_loop(ctx, &in, cycles, (long long)period_us * 1000, &stats);
  if (rc == 0) {
    const long pool_loop = g_pool_calls - pool_before;
    const long heap_loop = heap_probe_calls != NULL ? heap_probe_calls() - heap_before : 0;
    printf("output[0]: first %.5f, last %.5f\n", (double)stats.first, (double)stats.last);
    printf("loop: %ld cycles of %ld us: deadline misses %ld (releases skipped %ld), cycle time "
           "mean %.1f us, worst %.1f us\n", cycles, period_us, stats.misses, stats.skipped,
           (double)stats.total_ns / 1e3 / (double)cycles, (double)stats.worst_ns / 1e3);
    printf("library allocations during the loop: %ld\n", pool_loop);
    if (heap_probe_calls != NULL)
      printf("heap calls during the loop: %ld (start-up: %ld)\n", heap_loop, heap_before);
  }
  if (heap_probe_arm != NULL) heap_probe_arm(0);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return rc;
}
