/* jetplan runtime C API.
 *
 * A plan (.jplan) is produced offline by jetplan-convert. At run time:
 *   jp_plan_load_file / jp_plan_load_buffer  -> verifies the whole plan (untrusted input)
 *   jp_context_create                        -> binds the plan to a backend and an arena
 *   jp_context_set_input / jp_context_run / jp_context_get_output
 *   jp_context_destroy, jp_plan_destroy
 *
 * Errors: every fallible call returns a jp_status; jp_status_string names it, and the detail
 * (which tensor, which step, which offset) goes to the log callback and to jp_last_error(),
 * a per-thread copy of the last detailed message. The library never aborts, never prints on its
 * own and allocates nothing during jp_context_run.
 *
 * Ownership: a jp_plan must outlive every context created from it. Pointers returned by the
 * library (names, output data) stay valid until the owning plan or context is destroyed.
 * Thread safety: distinct contexts may run concurrently; one context is used by one thread at a
 * time. A plan is immutable after load and may be shared.
 */
#ifndef JETPLAN_JETPLAN_H_
#define JETPLAN_JETPLAN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define JP_API
#else
#define JP_API __attribute__((visibility("default")))
#endif

#if defined(__cplusplus) && __cplusplus >= 201703L
#define JP_NODISCARD [[nodiscard]]
#elif defined(__GNUC__)
#define JP_NODISCARD __attribute__((warn_unused_result))
#else
#define JP_NODISCARD
#endif

#define JP_VERSION_MAJOR 0
#define JP_VERSION_MINOR 1
#define JP_VERSION_PATCH 0
/* The plan schema version this runtime reads (schemas/plan.fbs). */
#define JP_SCHEMA_VERSION 1
#define JP_MAX_RANK 8

typedef enum jp_status {
  JP_OK = 0,
  JP_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, an index out of range, a wrong size */
  JP_ERROR_IO = 2,               /* a file could not be opened or read */
  JP_ERROR_INVALID_PLAN = 3,     /* not a jetplan plan, truncated, corrupt or inconsistent */
  JP_ERROR_VERSION_MISMATCH = 4, /* a plan of a schema version this runtime does not read */
  JP_ERROR_UNSUPPORTED = 5,      /* a valid plan this runtime or device cannot run */
  JP_ERROR_OUT_OF_MEMORY = 6,
  JP_ERROR_SHAPE_MISMATCH = 7,   /* an input of the wrong size */
  JP_ERROR_NOT_FOUND = 8,        /* no input or output of that name */
  JP_ERROR_DEVICE = 9,           /* no usable GPU, or a driver error */
  JP_ERROR_INTERNAL = 10
} jp_status;

typedef enum jp_dtype {
  JP_FLOAT32 = 0,
  JP_FLOAT16 = 1,
  JP_INT8 = 2,
  JP_UINT8 = 3,
  JP_INT32 = 4,
  JP_INT64 = 5,
  JP_BOOL = 6,
  JP_FLOAT64 = 7,
  JP_INT16 = 8,
  JP_UINT16 = 9,
  JP_UINT32 = 10,
  JP_UINT64 = 11,
  JP_BFLOAT16 = 12 /* the upper 16 bits of a float32, as a uint16_t */
} jp_dtype;

typedef enum jp_log_level { JP_LOG_ERROR = 0, JP_LOG_WARNING = 1, JP_LOG_INFO = 2 } jp_log_level;

typedef enum jp_backend { JP_BACKEND_CPU = 0, JP_BACKEND_CUDA = 1 } jp_backend;

typedef struct jp_plan jp_plan;
typedef struct jp_context jp_context;

typedef struct jp_tensor_desc {
  const char* name; /* owned by the plan */
  jp_dtype dtype;
  int32_t rank;
  int64_t dims[JP_MAX_RANK];
  size_t bytes;
} jp_tensor_desc;

/* Called for every error and warning, from the thread that hit it. msg is valid during the call. */
typedef void (*jp_log_fn)(void* user, jp_log_level level, const char* msg);

/* Process-wide log callback; NULL turns logging off (the default). */
JP_API void jp_set_log_callback(jp_log_fn fn, void* user);
JP_API const char* jp_status_string(jp_status status);
/* The detailed message of the last error on this thread ("" if none). */
JP_API const char* jp_last_error(void);
JP_API const char* jp_version_string(void);

/* Where the runtime's host memory comes from (plans, contexts, arenas the library allocates).
   allocate returns NULL on failure. Process-wide; NULL restores the default (posix_memalign and
   free). Set it before the first load and keep it while any plan or context exists: memory is
   given back to the allocator current at that time. */
typedef struct jp_allocator {
  void* (*allocate)(void* user, size_t bytes, size_t alignment);
  void (*deallocate)(void* user, void* ptr);
  void* user;
} jp_allocator;
JP_API void jp_set_allocator(const jp_allocator* allocator);

/* ---- the GPU ---- */

/* GPU 0, the one CUDA plans run on. */
typedef struct jp_device_desc {
  char name[128];       /* e.g. "NVIDIA H100 80GB HBM3", "Orin" */
  int32_t sm_arch;      /* compute capability major * 10 + minor: 87 (Orin), 90 (H100, H200) */
  int32_t sm_count;
  size_t total_memory;  /* bytes */
} jp_device_desc;
/* Fills *out with GPU 0's description. JP_ERROR_DEVICE (jp_last_error says why: no CUDA
   driver, no GPU) when there is none; what a CUDA plan's --target must match is sm_arch. */
JP_NODISCARD JP_API jp_status jp_cuda_device(jp_device_desc* out);

/* ---- plans ---- */

/* The plan keeps its own copy of the file. */
JP_NODISCARD JP_API jp_status jp_plan_load_file(const char* path, jp_plan** out);

/* Load flags for jp_plan_load_buffer. */
#define JP_LOAD_COPY 0u   /* copy the bytes; the caller's buffer may be freed after the call */
#define JP_LOAD_BORROW 1u /* use the caller's buffer in place (e.g. a plan in flash): it must be
                             256-byte aligned and outlive the plan */
#define JP_LOAD_NO_DEVICE 2u /* (or-ed with COPY/BORROW) verify a CUDA plan without touching a
                                GPU: every check binding makes that needs no device (each
                                step names a kernel of this library, of its dtypes and launch;
                                no output of run-time extent): its descriptions can be read,
                                no context created */
JP_NODISCARD JP_API jp_status jp_plan_load_buffer(const void* data, size_t size, uint32_t flags,
                                                  jp_plan** out);
JP_API void jp_plan_destroy(jp_plan* plan);

JP_API int32_t jp_plan_num_inputs(const jp_plan* plan);
JP_API int32_t jp_plan_num_outputs(const jp_plan* plan);
JP_NODISCARD JP_API jp_status jp_plan_input_desc(const jp_plan* plan, int32_t index,
                                                 jp_tensor_desc* out);
JP_NODISCARD JP_API jp_status jp_plan_output_desc(const jp_plan* plan, int32_t index,
                                                  jp_tensor_desc* out);
JP_NODISCARD JP_API jp_status jp_plan_find_input(const jp_plan* plan, const char* name,
                                                 int32_t* index);
JP_NODISCARD JP_API jp_status jp_plan_find_output(const jp_plan* plan, const char* name,
                                                  int32_t* index);
/* Bytes of the activation arena a context of this plan needs, and its required alignment. */
JP_API size_t jp_plan_arena_bytes(const jp_plan* plan);
JP_API size_t jp_plan_arena_alignment(const jp_plan* plan);
JP_API jp_backend jp_plan_backend(const jp_plan* plan);
JP_API int32_t jp_plan_num_steps(const jp_plan* plan);

/* One step of a plan, for profiles: pointers into the plan, valid while it lives. */
typedef struct jp_step_desc {
  const char* name;    /* the ONNX node(s) it came from */
  const char* op;      /* the op family ("Conv", ...) */
  const char* kernel;  /* the CUDA kernel variant; "" on CPU plans */
} jp_step_desc;
JP_NODISCARD JP_API jp_status jp_plan_step_desc(const jp_plan* plan, int32_t index,
                                                jp_step_desc* out);
/* "cpu", or the name of the GPU a CUDA plan is bound to ("" when loaded without a device). */
JP_API const char* jp_plan_device_name(const jp_plan* plan);

/* ---- contexts ---- */

/* Context flags (CUDA plans; ignored by CPU plans). */
#define JP_CONTEXT_NO_CUDA_GRAPH 1u /* launch the steps one by one instead of replaying the CUDA
                                       graph captured at creation (the default) */
#define JP_CONTEXT_DEVICE_IO 2u     /* inputs and outputs stay in GPU memory: the caller writes
                                       and reads them at jp_context_device_input/_output (on the
                                       context's stream or before enqueue); set_input/get_output
                                       are refused */
#define JP_CONTEXT_NO_EARLY_LAUNCH 4u /* every kernel starts after the previous one has finished.
                                         By default, on sm_90 and newer GPUs, the kernels that
                                         allow it launch while the one before them finishes
                                         (programmatic dependent launch) and wait for it on the
                                         GPU: the same results, less time between steps. For
                                         timing the difference, or ruling it out */

typedef struct jp_context_options {
  /* Optional caller-owned arena of at least jp_plan_arena_bytes bytes, aligned to
     jp_plan_arena_alignment; it must outlive the context. NULL: the context allocates it.
     For CUDA plans it is GPU memory (a CUdeviceptr cast to a pointer). */
  void* arena;
  size_t arena_bytes;
  uint32_t flags;     /* JP_CONTEXT_* */
  void* cuda_stream;  /* CUDA plans: the CUstream runs are queued on; NULL: the context's own */
} jp_context_options;

/* options may be NULL. Allocates the arena and input/output buffers; nothing after this. */
JP_NODISCARD JP_API jp_status jp_context_create(const jp_plan* plan,
                                                const jp_context_options* options,
                                                jp_context** out);
JP_API void jp_context_destroy(jp_context* ctx);

/* Copies bytes into input `index`; bytes must equal the input's size. An empty input (a dim of
   0, size 0) takes bytes == 0 and any data, null included. */
JP_NODISCARD JP_API jp_status jp_context_set_input(jp_context* ctx, int32_t index,
                                                   const void* data, size_t bytes);
/* Runs every step; returns when the outputs are ready (enqueue + synchronize). */
JP_NODISCARD JP_API jp_status jp_context_run(jp_context* ctx);
/* Queues a run and returns at once (CUDA plans: inputs copied in, the steps, outputs copied
   back, all on the context's stream; CPU plans run here). The inputs must not change and the
   outputs are not ready until jp_context_synchronize returns. Nothing is allocated. */
JP_NODISCARD JP_API jp_status jp_context_enqueue(jp_context* ctx);
JP_NODISCARD JP_API jp_status jp_context_synchronize(jp_context* ctx);
/* CUDA plans: GPU time of the steps of the last synchronized run, by CUDA events (copies
   excluded). JP_ERROR_UNSUPPORTED for CPU plans, JP_ERROR_NOT_FOUND before the first run. */
JP_NODISCARD JP_API jp_status jp_context_gpu_time_ms(const jp_context* ctx, float* ms);
/* Runs every step once on its own and writes its time in milliseconds to ms[step] (count
   entries at most; CUDA: events around each launch; CPU: the wall clock). A diagnostic: the
   first call may allocate (events). */
JP_NODISCARD JP_API jp_status jp_context_profile_steps(jp_context* ctx, float* ms, int32_t count);
/* CUDA plans: the GPU address of input/output `index` (valid for the context's life). */
JP_NODISCARD JP_API jp_status jp_context_device_input(const jp_context* ctx, int32_t index,
                                                      void** device_ptr);
JP_NODISCARD JP_API jp_status jp_context_device_output(const jp_context* ctx, int32_t index,
                                                       void** device_ptr);
/* Output `index`: *data stays valid (and is overwritten by the next run) until the context dies.
   *bytes is the size of this run's result: for outputs whose leading extent is known only at run
   time (e.g. NonMaxSuppression) it is less than the plan's description says. An empty output
   (a dim of 0) has *bytes == 0 (and *data, not null, must not be read). */
JP_NODISCARD JP_API jp_status jp_context_get_output(const jp_context* ctx, int32_t index,
                                                    const void** data, size_t* bytes);
/* Output `index` as the last run produced it (dims[0] is the run-time extent where it varies). */
JP_NODISCARD JP_API jp_status jp_context_output_desc(const jp_context* ctx, int32_t index,
                                                     jp_tensor_desc* out);

/* ---- step observer (calibration, debugging) ---- */

/* Called by jp_context_run (and jp_context_enqueue) after each step, once per output tensor of
   that step, in step order and then in the step's output order. step indexes jp_plan_step_desc.
   tensor_name is owned by the plan (valid while it lives); dims (rank entries, the plan's
   extents: for outputs whose leading extent is known only at run time it is the capacity) and
   data (host memory, dims' elements of dtype, C order) are valid only during the call, and data
   must not be written. The callback runs on the thread that runs the context; it must not call
   back into the same context. jp_context_profile_steps does not call it. */
typedef void (*jp_step_observer_fn)(void* user, int32_t step, const char* tensor_name,
                                    jp_dtype dtype, const int64_t* dims, int32_t rank,
                                    const void* data);
/* Sets the context's observer (fn NULL clears it; user is passed through, not owned). CPU plans:
   allocates nothing; runs stay allocation-free. CUDA plans: allocates pinned host memory for the
   largest tensor a step writes (an error, and no observer, if it cannot), and a run with an observer
   launches the steps one by one instead of the CUDA graph, copies each tensor a step writes to
   that memory and waits for it before the call (so jp_context_enqueue returns only when the
   observer has seen every step): slow, for calibration and debugging. */
JP_NODISCARD JP_API jp_status jp_context_set_step_observer(jp_context* ctx,
                                                          jp_step_observer_fn fn, void* user);

/* ---- camera frames into an input (decode, resize, normalize in one pass) ---- */

typedef enum jp_pixel_format {
  JP_PIXEL_RGB8 = 0, /* 3 bytes a pixel, R G B */
  JP_PIXEL_BGR8 = 1, /* 3 bytes a pixel, B G R (OpenCV) */
  JP_PIXEL_YUYV = 2  /* Y0 U Y1 V per pixel pair (V4L2 YUYV, what UVC webcams send); BT.601
                        limited range; width even */
} jp_pixel_format;

/* How the frame is fitted to the input's H x W (bilinear, half-pixel centres, as cv2.resize). */
typedef enum jp_fit {
  JP_FIT_STRETCH = 0,    /* the whole frame, aspect ratio not kept */
  JP_FIT_LETTERBOX = 1,  /* the whole frame, aspect kept, centred between bars of pad_value
                            (detectors: YOLO-style models are trained on letterboxed images) */
  JP_FIT_CENTER_CROP = 2 /* fills the input, aspect kept, the frame's longer side cut evenly
                            (classifiers: ImageNet's resize + centre crop) */
} jp_fit;

typedef struct jp_preprocess_desc {
  jp_pixel_format format;
  int32_t width, height; /* of the frame, in pixels */
  size_t row_bytes;      /* the frame's stride; 0: tightly packed */
  jp_fit fit;
  /* Per network channel, in [0, 1] units: value = (pixel / 255 - mean) / std. mean 0, std 1
     gives pixel / 255; ImageNet: mean {0.485, 0.456, 0.406}, std {0.229, 0.224, 0.225}. */
  float mean[3];
  float std[3];
  float pad_value; /* letterbox bars as a pixel value in [0, 255] (YOLO: 114), normalized too */
  int32_t bgr;     /* the network's channel order: 0 RGB, 1 BGR */
} jp_preprocess_desc;

/* The input a preprocessor writes must be Float32 or Float16 of shape [1, 3, H, W] (NCHW) or
   [1, H, W, 3] (NHWC); [1, 3, H, 3]-like shapes read as NCHW. */
typedef struct jp_preprocessor jp_preprocessor;

/* Binds a preprocessor to input `input_index` of ctx, with two frame slots of
   jp_preprocessor_frame_bytes each (pinned host memory on CUDA plans, so uploads are
   asynchronous). ctx must outlive it. A CUDA context's later enqueues no longer copy that input
   from the host: the preprocessor writes it on the GPU. Allocates here, never in _run. */
JP_NODISCARD JP_API jp_status jp_preprocessor_create(jp_context* ctx, int32_t input_index,
                                                     const jp_preprocess_desc* desc,
                                                     jp_preprocessor** out);
JP_API void jp_preprocessor_destroy(jp_preprocessor* pre);
/* Bytes of one frame (height * row_bytes). */
JP_API size_t jp_preprocessor_frame_bytes(const jp_preprocessor* pre);
/* Frame slot 0 or 1 (NULL otherwise), owned by the preprocessor: write a frame here. */
JP_API void* jp_preprocessor_frame(jp_preprocessor* pre, int32_t slot);
/* Writes the input from frame `slot`. CPU plans: now, in the calling thread. CUDA plans: queues
   the frame's upload on the preprocessor's own stream (it overlaps a run still in flight) and
   the kernel on the context's stream, after that run; returns at once. The slot must not be
   written again until the jp_context_synchronize after the next enqueue returns. */
JP_NODISCARD JP_API jp_status jp_preprocessor_run(jp_preprocessor* pre, int32_t slot);
/* Where input pixel (x, y) came from in the frame: frame = input * scale + offset (per axis).
   Maps boxes back from letterboxed or cropped inputs. */
JP_NODISCARD JP_API jp_status jp_preprocessor_geometry(const jp_preprocessor* pre, float scale[2],
                                                       float offset[2]);

/* The same computation on the host without a context: `frame` to `out` (out_bytes must be
   3 * out_height * out_width * 4 for JP_FLOAT32 or * 2 for JP_FLOAT16). */
JP_NODISCARD JP_API jp_status jp_preprocess_image(const jp_preprocess_desc* desc,
                                                  const void* frame, jp_dtype dtype,
                                                  int32_t channels_first, int32_t out_height,
                                                  int32_t out_width, void* out, size_t out_bytes);

/* ---- detector and segmenter outputs (post-processing on the host) ---- */

/* A YOLO-style anchor-free grid head, one image: per cell (gx, gy) 5 + classes channels:
   objectness logit, centre offsets dx, dy (logits), log width and log height (in strides), class
   logits; laid out [5 + classes, grid_height, grid_width] (a [1, 5 + C, GH, GW] output) or, with
   channels_last, [grid_height, grid_width, 5 + classes]. Decoded in input pixels:
     centre = (cell + sigmoid(dx, dy)) * stride, size = exp(log size) * stride,
     box clipped to [0, image_width] x [0, image_height],
     score(class) = sigmoid(objectness) * softmax(class logits)[class].
   Every (cell, class) scoring >= score_threshold is a candidate, index cell * classes + class
   (cell = gy * grid_width + gx); they are ranked by score descending then index ascending, the
   first max_candidates go to per-class greedy NMS (a kept box suppresses a later one of its
   class with IoU > iou_threshold), the first max_detections kept come out in rank order. The
   CUDA kernels of the same computation (kernels/cuda/detect_postprocess.cu) give the same bits. */
typedef struct jp_detect_desc {
  int32_t grid_width, grid_height; /* cells, each >= 1 */
  int32_t classes;                 /* >= 1 */
  int32_t channels_last;           /* 0: [5 + C, GH, GW]; 1: [GH, GW, 5 + C] */
  float stride;                    /* input pixels per cell, > 0 */
  float image_width, image_height; /* the input's size in pixels, > 0 */
  float score_threshold;           /* in [0, 1] */
  float iou_threshold;             /* in [0, 1] */
  int32_t max_candidates;          /* >= 1 */
  int32_t max_detections;          /* >= 1 */
} jp_detect_desc;

typedef struct jp_detection {
  float x0, y0, x1, y1; /* input pixels, continuous coordinates */
  float score;
  int32_t class_index;
  int32_t candidate; /* cell * classes + class */
} jp_detection;

/* Bytes of workspace jp_detect_boxes needs for desc (0 when desc is invalid). */
JP_API size_t jp_detect_workspace_bytes(const jp_detect_desc* desc);
/* Decodes `head` (head_bytes must be (5 + classes) * grid cells * 4: Float32) into at most
   desc->max_detections boxes in `out` (out_capacity entries, >= max_detections) and their number
   in *count. workspace: jp_detect_workspace_bytes, 16-byte aligned, caller-owned. Allocates
   nothing. */
JP_NODISCARD JP_API jp_status jp_detect_boxes(const jp_detect_desc* desc, const float* head,
                                              size_t head_bytes, void* workspace,
                                              size_t workspace_bytes, jp_detection* out,
                                              int32_t out_capacity, int32_t* count);

/* The same on a context's output, where it lives: a detector bound to output `output_index` of
   ctx (Float32, (5 + classes) * grid cells elements, ctx must outlive it). Allocates here (CUDA
   plans: workspace and results in GPU memory, pinned host results), never in _run. */
typedef struct jp_detector jp_detector;
JP_NODISCARD JP_API jp_status jp_detector_create(jp_context* ctx, int32_t output_index,
                                                 const jp_detect_desc* desc, jp_detector** out);
JP_API void jp_detector_destroy(jp_detector* det);
/* The detections of the context's last run (call it after jp_context_run, or after the
   jp_context_synchronize of an enqueue; on CUDA plans it may also follow jp_context_enqueue at
   once: it is queued on the context's stream). CPU plans: the CPU twin on the host output. CUDA
   plans: the kernels on the device output, only the detections copied back. *detections
   (*count entries, at most desc->max_detections) is owned by the detector and valid until its
   next run. */
JP_NODISCARD JP_API jp_status jp_detector_run(jp_detector* det, const jp_detection** detections,
                                              int32_t* count);

/* A segmenter's Float32 logits of one image, [classes, height, width] (a [1, C, H, W] output) or,
   with channels_last, [height, width, classes], to a class per pixel (`out`: height * width
   int32, out_bytes = height * width * 4): the largest logit's class, ties to the lowest, NaN
   never chosen over a number. Allocates nothing. */
JP_NODISCARD JP_API jp_status jp_pixel_classes(const float* logits, size_t logits_bytes,
                                               int32_t classes, int32_t height, int32_t width,
                                               int32_t channels_last, int32_t* out,
                                               size_t out_bytes);

/* The same on a context's output, where it lives: a class map bound to output `output_index` of
   ctx (Float32 [1, C, H, W], or [1, H, W, C] with channels_last; ctx must outlive it). Allocates
   here, never in _run. */
typedef struct jp_class_map jp_class_map;
JP_NODISCARD JP_API jp_status jp_class_map_create(jp_context* ctx, int32_t output_index,
                                                  int32_t channels_last, jp_class_map** out);
JP_API void jp_class_map_destroy(jp_class_map* map);
/* The classes of the context's last run (after jp_context_run, or the jp_context_synchronize of
   an enqueue; on CUDA plans it may follow jp_context_enqueue at once). CPU plans: the CPU twin on
   the host output. CUDA plans: the kernel on the device output, only the classes copied back.
   *classes (height * width int32, row-major) is owned by the map and valid until its next run;
   height and width may be NULL. */
JP_NODISCARD JP_API jp_status jp_class_map_run(jp_class_map* map, const int32_t** classes,
                                               int32_t* height, int32_t* width);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* JETPLAN_JETPLAN_H_ */
