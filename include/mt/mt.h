/* mt.h: the C API of libmt, for apps that run .mt models (made by mt-convert, mt-fuse,
 * mt-quantize, mt-prepack) on the cpu, vulkan or reference backend. Plain C99, opaque handles.
 *
 * Errors: every function that can fail returns an mt_status (MT_OK or the class of the error,
 * the same classes as the exit codes of the mt tools) and sets a one-line message naming what
 * and where, read with mt_last_error() on the same thread. No C++ exception crosses this API.
 *
 * Threads: a model is immutable once open and may be used by any number of threads at once (to
 * read its tensors and to create sessions). A session is used by one thread at a time (different
 * sessions of one model run in parallel). A session keeps its model's data alive, so a model may
 * be closed while sessions made from it are still in use.
 *
 * Documented in mt(3). */
#ifndef MT_MT_H
#define MT_MT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The classes of errors; the values are the exit codes of the mt tools (mt(7)). */
typedef enum mt_status {
  MT_OK = 0,
  MT_ERROR_FAILURE = 1,       /* I/O error, device failure, out of memory, internal error */
  MT_ERROR_USAGE = 2,         /* a bad argument: null pointer, unknown name, wrong size or dtype, unbound tensor */
  MT_ERROR_INVALID_INPUT = 3, /* a malformed or inconsistent model file */
  MT_ERROR_UNSUPPORTED = 4,   /* a valid model or option this build or device cannot run */
  MT_ERROR_CHECK_FAILED = 5,  /* (tools only: a requested check did not pass) */
  /* Not a status: makes the enum 32 bits wide, so that any int a caller passes is a valid value. */
  MT_STATUS_MAX_ENUM = 0x7FFFFFFF
} mt_status;

/* Element types, as in the model file. */
typedef enum mt_dtype {
  MT_FLOAT32 = 0,
  MT_FLOAT16 = 1,
  MT_INT8 = 2,
  MT_UINT8 = 3,
  MT_INT32 = 4,
  MT_INT64 = 5,
  MT_BOOL = 6, /* one byte, 0 or 1 */
  /* Not a dtype: makes the enum 32 bits wide, so that any int a caller passes is a valid value. */
  MT_DTYPE_MAX_ENUM = 0x7FFFFFFF
} mt_dtype;

typedef struct mt_model mt_model;
typedef struct mt_session mt_session;

/* A graph input or output. The pointers stay valid until the model is closed. */
typedef struct mt_tensor_info {
  const char* name;
  mt_dtype dtype;
  size_t rank;
  const int64_t* shape; /* rank dimensions, row-major (for a channels-last input: N,H,W,C) */
  size_t byte_size;     /* the size of the buffer to bind: element count times dtype size */
} mt_tensor_info;

/* How a session is planned. Fill it with mt_options_init() and then change what you need. */
typedef struct mt_options {
  const char* device;    /* "cpu" (default), "vulkan" or "reference" */
  int threads;           /* cpu: threads of the session's own pool, 1 (default) runs on the caller's thread */
  int gpu_index;         /* vulkan: which device (as mt-run --list-devices numbers them), default 0 */
  const char* precision; /* vulkan: "fp32" or "fp16"; NULL (default): the model's packed precision, else fp32 */
} mt_options;

/* The library's version, "MAJOR.MINOR.PATCH". */
const char* mt_version(void);

/* The message of the last failed call on this thread ("" if none yet); valid until the next
 * failing call on this thread. */
const char* mt_last_error(void);

/* The name of a status ("ok", "usage", "invalid input", ...) and of a dtype ("float32", ...). */
const char* mt_status_name(mt_status status);
const char* mt_dtype_name(mt_dtype dtype);

/* Opens a model file, memory-mapped (weights are used in place); "-" reads standard input. */
mt_status mt_model_open(const char* path, mt_model** model);
/* Opens a model from `size` bytes of memory; the bytes are copied, so the caller may free them. */
mt_status mt_model_open_memory(const void* data, size_t size, mt_model** model);
/* Closes a model (NULL is ignored). Sessions made from it stay usable. */
void mt_model_close(mt_model* model);

size_t mt_model_input_count(const mt_model* model);
size_t mt_model_output_count(const mt_model* model);
/* The input or output `index` (0 <= index < count), in the model's order. */
mt_status mt_model_input(const mt_model* model, size_t index, mt_tensor_info* info);
mt_status mt_model_output(const mt_model* model, size_t index, mt_tensor_info* info);

/* Defaults: device "cpu", 1 thread, gpu_index 0, precision NULL. */
void mt_options_init(mt_options* options);

/* Plans `model` for a device (options NULL: the defaults): checks that the backend runs every
 * node, packs weights and allocates the session's memory. Errors: an unknown device, a device
 * not built in or absent (vulkan without a driver, gpu_index out of range), a node the backend
 * cannot run, a model prepacked for another backend (unsupported); bad threads or precision
 * (usage). */
mt_status mt_session_create(const mt_model* model, const mt_options* options, mt_session** session);
/* Destroys a session (NULL is ignored). */
void mt_session_destroy(mt_session* session);

/* Binds caller memory to the input or output called `name`: `size` bytes of `dtype`, which must
 * equal the tensor's (mt_tensor_info.byte_size and .dtype), aligned for the dtype. The memory
 * must stay valid while the session runs; bindings persist across runs, so bind once and change
 * the input data in place between runs. */
mt_status mt_session_bind_input(mt_session* session, const char* name, mt_dtype dtype, const void* data, size_t size);
mt_status mt_session_bind_output(mt_session* session, const char* name, mt_dtype dtype, void* data, size_t size);

/* Runs the model once: reads every bound input, writes every bound output. Every input and
 * output must be bound first (usage error naming the first one that is not). */
mt_status mt_session_run(mt_session* session);

/* After a run: how many leading rows (indices of the first dimension) of output `name` hold data.
 * That is its first dimension, except for an output whose number of rows depends on the data
 * (NonMaxSuppression's selected boxes, and what row-wise ops compute from them): mt plans it at its
 * largest size, writes the valid rows first and their count to another output of the model (see
 * mt-run(1)), which this reads. Errors (usage): no such output, a scalar output, no run yet. */
mt_status mt_session_output_rows(const mt_session* session, const char* name, int64_t* rows);

#ifdef __cplusplus
}
#endif

#endif /* MT_MT_H */
