// tlc command-line entry point; everything else lives in tlc_lib (see driver/driver.h).
#include "driver/driver.h"

int main(int argc, char** argv) {
    return tlc::driver::run_main(argc, argv);
}
