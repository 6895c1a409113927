// random_driver.h — what every driver of the GPU differential test shares: read a program's
// inputs (<program dir>/in/*.npy), copy them to the device, launch, copy the mut tensors back and
// write them to <out dir>/*.npy. A driver.cu (tests/random_programs_gpu.py) defines
// `case_<id>::run` with its tensors and its launch, and a main() unless TLC_BATCH is defined; a
// batch (tests/gpu/random_batches.py) includes many programs and drivers into one binary whose
// main() runs a list of cases in one process.
#pragma once

#include "npy_io.h"
#include "tl/host/launch.h"  // tlc_last_error_message

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace random_driver {

struct Tensor {
    const char* name;
    const char* descr;
    std::vector<int64_t> shape;
    bool mut;
    npy_io::Array host;
    void* device = nullptr;
};

inline bool ok(cudaError_t err, const char* what) {
    if (err == cudaSuccess) return true;
    std::fprintf(stderr, "driver: %s: %s (%s)\n", what, cudaGetErrorName(err), cudaGetErrorString(err));
    return false;
}

// Runs one program: 0 on success, 1 on a failure (reported on stderr).
inline int run(const std::string& program_dir, const std::string& out_dir, std::vector<Tensor> tensors,
               const char* kernel, const std::function<cudaError_t(std::vector<Tensor>&)>& launch) {
    const std::string in = program_dir + "/in/", out = out_dir + "/";
    try {
        for (Tensor& t : tensors) t.host = npy_io::read(in + t.name + ".npy", t.descr, t.shape);
    } catch (const npy_io::Error& err) {
        std::fprintf(stderr, "driver: %s\n", err.what());
        return 1;
    }
    int status = 0;
    for (Tensor& t : tensors) {
        // Exact sizes, so that compute-sanitizer sees any access past the end; an empty tensor
        // gets one element, as the launch function rejects a null pointer.
        const size_t bytes = t.host.data.empty() ? npy_io::element_size(t.descr) : t.host.data.size();
        if (!ok(cudaMalloc(&t.device, bytes), "cudaMalloc")) return 1;
        if (!t.host.data.empty() &&
            !ok(cudaMemcpy(t.device, t.host.data.data(), t.host.data.size(), cudaMemcpyHostToDevice),
                "cudaMemcpy to the device"))
            status = 1;
    }
    if (status == 0) {
        const cudaError_t err = launch(tensors);
        if (err != cudaSuccess) {
            std::fprintf(stderr, "driver: %s returned %s: %s\n", kernel, cudaGetErrorName(err), tlc_last_error_message());
            status = 1;
        } else if (!ok(cudaDeviceSynchronize(), "the kernel") || !ok(cudaGetLastError(), "after the kernel")) {
            status = 1;
        }
    }
    for (Tensor& t : tensors) {
        if (status == 0 && t.mut && !t.host.data.empty() &&
            !ok(cudaMemcpy(t.host.data.data(), t.device, t.host.data.size(), cudaMemcpyDeviceToHost),
                "cudaMemcpy from the device"))
            status = 1;
        cudaFree(t.device);
    }
    if (status != 0) return status;
    try {
        for (const Tensor& t : tensors)
            if (t.mut) npy_io::write(out + t.name + ".npy", t.host);
    } catch (const npy_io::Error& err) {
        std::fprintf(stderr, "driver: %s\n", err.what());
        return 1;
    }
    return 0;
}

using Case = int (*)(const std::string& program_dir, const std::string& out_dir);

// main() of a single driver: `driver PROGRAM_DIR OUT_DIR`.
inline int single_main(int argc, char** argv, Case run_case) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s PROGRAM_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    return run_case(argv[1], argv[2]);
}

// main() of a batch: `batch LIST`, each line of LIST `<case index> <program dir> <out dir>`. Prints
// `CASE <index> <status>` after each case (status as single_main's). A case that leaves the device
// in an error state ends the process with status 3 after its line, so that the caller can start
// the rest of the list in a fresh process.
inline int batch_main(int argc, char** argv, const std::vector<Case>& cases) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s LIST\n", argv[0]);
        return 2;
    }
    std::ifstream list(argv[1]);
    std::string line;
    while (std::getline(list, line)) {
        std::istringstream fields(line);
        size_t index = 0;
        std::string program_dir, out_dir;
        if (!(fields >> index >> program_dir >> out_dir) || index >= cases.size()) {
            std::fprintf(stderr, "batch: bad line `%s`\n", line.c_str());
            return 2;
        }
        std::fprintf(stderr, "=== CASE %zu %s\n", index, program_dir.c_str());
        const int status = cases[index](program_dir, out_dir);
        const bool device_ok = cudaDeviceSynchronize() == cudaSuccess && cudaGetLastError() == cudaSuccess;
        std::printf("CASE %zu %d\n", index, status);
        std::fflush(stdout);
        std::fflush(stderr);
        if (!device_ok) return 3;
    }
    return 0;
}

}  // namespace random_driver
