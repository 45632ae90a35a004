#!/usr/bin/env node
// The npm launcher of mcp-simple-aggregator, a Go binary. npm installs the
// one package of @mcp-simple-aggregator/PLATFORM-ARCH (optionalDependencies
// with "os" and "cpu") that fits this machine; this script finds its binary
// and runs it with our stdin, stdout and stderr (the MCP stream passes
// straight through, never through node), forwards the signals a client
// sends to stop it, and exits as the binary exited.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const pkg = `@mcp-simple-aggregator/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "mcp-simple-aggregator.exe" : "mcp-simple-aggregator";

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch (err) {
  process.stderr.write(
    `mcp-simple-aggregator: no binary for ${process.platform}-${process.arch}: ` +
      `the package ${pkg} is not installed (${err.code || err.message}).\n` +
      `npm installs it as an optional dependency: reinstall without --omit=optional or --no-optional, ` +
      `or use a release archive (README.md#install).\n`
  );
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const sig of forwarded) {
  process.on(sig, () => {
    // The binary stops its servers and exits; we exit when it has.
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  });
}

child.on("error", (err) => {
  process.stderr.write(`mcp-simple-aggregator: cannot run ${binary}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so that our parent sees what happened.
    for (const sig of forwarded) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
