/* The CUDA modules (one fatbin per kernels/cuda/<family>.cu) built into libjetplan. A build
   without nvcc has none: jp_embedded_module_count is 0 and GPU plans fail at load, saying so. */
#ifndef JETPLAN_KERNELS_CUDA_EMBEDDED_H_
#define JETPLAN_KERNELS_CUDA_EMBEDDED_H_

#ifdef __cplusplus
extern "C" {
#endif

struct jp_embedded_module {
  const char* name;          /* the .cu file's stem */
  const unsigned char* begin;
  const unsigned char* end;  /* one past the last byte */
};

extern const struct jp_embedded_module jp_embedded_modules[];
extern const int jp_embedded_module_count;

#ifdef __cplusplus
}
#endif

#endif
