// The entry point of `narad serve`: parses the serve flags (Narad's: --config --port --addr
// --cluster-port --node-id --data-dir --log-level --log-format --pprof-addr, plus ours), loads the
// layered configuration, builds the Node, runs it until SIGINT/SIGTERM, and stops it in order.
#pragma once

namespace narad::node {

// `args` are the arguments after "serve" (argv[0] is the program name). Returns the exit code.
int serve_main(int argc, char** argv);

}  // namespace narad::node
