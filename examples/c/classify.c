/* classify: runs a one-input, one-output float32 classifier (.mt) on an input from a .npy file
 * and prints its three best classes. Uses only the C API of libmt (mt(3)):
 *   cc classify.c $(pkg-config --cflags --libs mt) -o classify
 *   ./classify digits.mt image.npy [labels.txt] */
#include <mt/mt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what) {
  fprintf(stderr, "classify: %s: %s\n", what, mt_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) return fprintf(stderr, "usage: classify MODEL.mt INPUT.npy [LABELS]\n"), 2;
  mt_model* model;
  mt_session* session;
  mt_tensor_info in, out;
  if (mt_model_open(argv[1], &model) || mt_model_input(model, 0, &in) || mt_model_output(model, 0, &out))
    return fail("model");
  if (mt_session_create(model, NULL, &session)) return fail("cpu");  /* NULL: 1 thread on the cpu */

  /* A .npy file is a header ("\x93NUMPY", version, length, a dict) and the raw data. */
  static _Alignas(64) char npy[1 << 20];
  FILE* f = fopen(argv[2], "rb");
  size_t n = f ? fread(npy, 1, sizeof npy, f) : 0;
  if (f) fclose(f);
  size_t header = 10 + (unsigned char)npy[8] + 256u * (unsigned char)npy[9];
  if (n < 10 || memcmp(npy, "\x93NUMPY\x01", 7) || !strstr(npy + 10, "'<f4'") || n - header != in.byte_size)
    return fprintf(stderr, "classify: %s: need a float32 .npy of %zu bytes\n", argv[2], in.byte_size), 3;

  float* scores = malloc(out.byte_size);
  size_t classes = out.byte_size / sizeof(float);
  if (mt_session_bind_input(session, in.name, MT_FLOAT32, npy + header, in.byte_size) ||
      mt_session_bind_output(session, out.name, MT_FLOAT32, scores, out.byte_size) || mt_session_run(session))
    return fail("run");

  char labels[64][64] = {{0}};
  FILE* l = argc > 3 ? fopen(argv[3], "r") : NULL;
  for (int i = 0; l && i < 64 && fscanf(l, " %63[^\n]", labels[i]) == 1; ++i) {}
  if (l) fclose(l);
  for (int rank = 1; rank <= 3 && rank <= (int)classes; ++rank) {
    size_t best = 0;
    for (size_t c = 1; c < classes; ++c)
      if (scores[c] > scores[best]) best = c;
    printf("%d. class %zu %s score %.4f\n", rank, best, best < 64 ? labels[best] : "", scores[best]);
    scores[best] = -1e30f;
  }
  free(scores);
  mt_session_destroy(session);
  mt_model_close(model);
  return 0;
}
