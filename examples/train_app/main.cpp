//===- main.cpp - Train an attention layer with attn kernels -------------===//
//
// Trains the three projections of a linear-attention layer
// (attention_layer.mlir) by SGD with two kernels attn-compile made: the
// forward @attention_layer and its gradient @attention_layer_grad. The data
// is synthetic: a teacher layer with fixed random weights maps random
// tokens to targets; a student starts from other random weights and learns
// to match it under the mean squared error. The C++ side only computes the
// loss, its cotangent dL/dO and the SGD step:
//
//   O = attention_layer(X, Wq, Wk, Wv)
//   L = mean((O - Y)^2),  dO = 2 (O - Y) / size
//   (dWq, dWk, dWv) = attention_layer_grad(X, Wq, Wk, Wv, dO)
//   W -= lr * dW
//
// Every 50 steps it prints the loss; it exits 1 unless the final loss is
// below a tenth of the first (a broken gradient cannot pass).
//
//   attn-train-app [steps]     (default 300)
//
//===----------------------------------------------------------------------===//

#include "attention_layer.h"
#include "attention_layer_grad.h"

#include "HalideBuffer.h"

#include <cstdio>
#include <cstdlib>
#include <random>

namespace {

constexpr int kTokens = 256, kDim = 16;
constexpr float kLearningRate = 5.0f;
using Buffer = Halide::Runtime::Buffer<float>;

/// A row-major (rows x cols) matrix: Halide dim 0 is the column.
Buffer randomMatrix(int rows, int cols, std::mt19937 &rng, float low,
                    float high) {
  Buffer buffer(cols, rows);
  std::uniform_real_distribution<float> uniform(low, high);
  buffer.for_each_value([&](float &x) { x = uniform(rng); });
  return buffer;
}

void check(int error, const char *what) {
  if (error) {
    std::fprintf(stderr, "attn-train-app: %s returned error %d\n", what,
                 error);
    std::exit(1);
  }
}

struct Weights {
  Buffer wq, wk, wv;
};

Weights randomWeights(std::mt19937 &rng) {
  float bound = 0.5f;
  return {randomMatrix(kDim, kDim, rng, -bound, bound),
          randomMatrix(kDim, kDim, rng, -bound, bound),
          randomMatrix(kDim, kDim, rng, -bound, bound)};
}

} // namespace

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  if (steps < 1) {
    std::fprintf(stderr, "usage: attn-train-app [steps >= 1]\n");
    return 2;
  }
  std::mt19937 rng(2024);
  Buffer x = randomMatrix(kTokens, kDim, rng, -1.0f, 1.0f);
  Weights teacher = randomWeights(rng);
  Weights student = randomWeights(rng);
  Buffer target(kDim, kTokens), output(kDim, kTokens), dOutput(kDim, kTokens);
  check(attention_layer(x, teacher.wq, teacher.wk, teacher.wv, target),
        "attention_layer (teacher)");

  // The loss of the student now; also sets dOutput = dL/dO.
  auto forwardLoss = [&]() {
    check(attention_layer(x, student.wq, student.wk, student.wv, output),
          "attention_layer");
    double loss = 0.0, size = double(kTokens) * kDim;
    for (int i = 0; i < kTokens; ++i)
      for (int c = 0; c < kDim; ++c) {
        double error = double(output(c, i)) - target(c, i);
        loss += error * error / size;
        dOutput(c, i) = float(2.0 * error / size);
      }
    return loss;
  };

  Buffer dwq(kDim, kDim), dwk(kDim, kDim), dwv(kDim, kDim);
  double firstLoss = forwardLoss(), loss = firstLoss;
  for (int step = 0; step < steps; ++step) {
    if (step % 50 == 0)
      std::printf("step %4d  loss %.6f\n", step, loss);
    check(attention_layer_grad(x, student.wq, student.wk, student.wv, dOutput,
                               dwq, dwk, dwv),
          "attention_layer_grad");
    for (auto [w, dw] : {std::pair<Buffer *, Buffer *>{&student.wq, &dwq},
                         {&student.wk, &dwk},
                         {&student.wv, &dwv}})
      for (int r = 0; r < kDim; ++r)
        for (int c = 0; c < kDim; ++c)
          (*w)(c, r) -= kLearningRate * (*dw)(c, r);
    loss = forwardLoss();
  }
  std::printf("step %4d  loss %.6f  (%.1fx below the first)\n", steps, loss,
              firstLoss / loss);
  if (!(loss < 0.1 * firstLoss)) {
    std::fprintf(stderr,
                 "attn-train-app: the loss did not fall below a tenth of "
                 "the first (%.6f -> %.6f)\n",
                 firstLoss, loss);
    return 1;
  }
  return 0;
}
